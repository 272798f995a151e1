package awsenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// maxGraphQLReply is the most of a GraphQL response GraphQL reads.
const maxGraphQLReply = 1 << 20

// GraphQL posts a GraphQL request to an AppSync API's url as an IAM caller
// (Signature V4, service appsync), with headers given as name, value pairs,
// and returns the response (its body closed) and at most 1 MB of its body.
func GraphQL(ctx context.Context, client aws.HTTPClient, cfg aws.Config, url, query string, vars map[string]any, headers ...string) (*http.Response, []byte, error) {
	body, err := json.Marshal(map[string]any{"query": query, "variables": vars})
	if err != nil {
		return nil, nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if err := Sign(ctx, cfg, req, body, "appsync"); err != nil {
		return nil, nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxGraphQLReply))
	return resp, raw, err
}
