package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Invalidator ends the subscriptions of one subscription field to a post:
// Mutation.invalidatePost, called as an IAM caller (AppSync, in AWS; the
// local AppSync in make dev).
type Invalidator interface {
	InvalidatePost(ctx context.Context, postID, subscription string) error
}

// Projection ends every subscription to a post deleted, from the table's
// stream (the projector applies it): a post's own item removed, it calls
// Mutation.invalidatePost once for each subscription field, so that each
// call asks AppSync for one invalidation. A record that comes again ends
// nothing more (the subscriptions are gone) and fails nothing.
type Projection struct{ inv Invalidator }

// NewProjection returns the projection, ending subscriptions through inv.
func NewProjection(inv Invalidator) *Projection { return &Projection{inv: inv} }

// StreamFilters are the records the projection applies: a post's own item
// removed.
var StreamFilters = []map[string]any{
	{"eventName": []any{"REMOVE"}, "dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.PostPK("")}}},
		store.AttrSK: map[string]any{"S": []any{store.SKMetadata}},
	}}},
}

// APIFields are the fields of the API the projection calls, which the
// projector's role may call and no more.
var APIFields = []string{"Mutation.invalidatePost"}

// Apply ends the subscriptions to the post whose item r removes, and
// ignores every other record.
func (p *Projection) Apply(ctx context.Context, r events.DynamoDBEventRecord) error {
	if r.EventName != string(events.DynamoDBOperationTypeRemove) || r.Change.Keys[store.AttrSK].String() != store.SKMetadata {
		return nil
	}
	id, isPost := strings.CutPrefix(r.Change.Keys[store.AttrPK].String(), store.PostPK(""))
	if !isPost {
		return nil
	}
	for _, field := range slices.Sorted(maps.Keys(subscribers)) {
		if err := p.inv.InvalidatePost(ctx, id, field); err != nil {
			return fmt.Errorf("ending %s subscriptions to post %s: %w", field, id, err)
		}
	}
	return nil
}

// invalidatePost is the mutation the projection sends.
const invalidatePost = `mutation Invalidate($id: ID!, $s: String!) { invalidatePost(id: $id, subscription: $s) }`

// GraphQL sends a GraphQL request to the API as an IAM caller and returns
// the HTTP status and body of its response.
type GraphQL func(ctx context.Context, query string, vars map[string]any) (status int, body []byte, err error)

// Signed is the GraphQL of the deployed API at url (the projector's
// GRAPHQL_URL), signed with cfg's credentials (the projector's role).
func Signed(client aws.HTTPClient, cfg aws.Config, url string) GraphQL {
	return func(ctx context.Context, query string, vars map[string]any) (int, []byte, error) {
		if url == "" {
			return 0, nil, errors.New("GRAPHQL_URL is not set: the projector cannot reach the API")
		}
		resp, raw, err := awsenv.GraphQL(ctx, client, cfg, url, query, vars)
		if err != nil {
			return 0, nil, err
		}
		return resp.StatusCode, raw, nil
	}
}

// API is the Invalidator that calls Mutation.invalidatePost through send.
type API GraphQL

// InvalidatePost calls Mutation.invalidatePost; a GraphQL error fails it,
// and the stream retries the record.
func (send API) InvalidatePost(ctx context.Context, postID, subscription string) error {
	status, raw, err := send(ctx, invalidatePost, map[string]any{"id": postID, "s": subscription})
	if err != nil {
		return err
	}
	var r struct {
		Errors []struct {
			ErrorType string `json:"errorType"`
			Message   string `json:"message"`
		} `json:"errors"`
	}
	switch {
	case json.Unmarshal(raw, &r) != nil:
		return fmt.Errorf("HTTP %d, not a GraphQL response: %.200s", status, raw)
	case len(r.Errors) > 0:
		return fmt.Errorf("%s: %s", r.Errors[0].ErrorType, r.Errors[0].Message)
	case status != 200:
		return fmt.Errorf("HTTP %d", status)
	}
	return nil
}
