package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/store"
)

// What the deployment's probe does (lambda/cmd/probe, after the API, its
// resolvers and the function exist): the probes need a published post, so
// it writes one of its own (Post) straight into the table, runs them as an
// IAM caller, deletes the post, and decides.

// The daily run's metric (lambda/cmd/probe), which the stack alarms on:
// FailureMetric, 1 when the probes failed, under the dimension
// MetricDimension valued MetricFunction.
const (
	FailureMetric   = "ProbeFailures"
	MetricDimension = "Function"
	MetricFunction  = "SelectionProbe"
)

// Post is the post the deployment's probes read: published, by an author
// with no profile, in a partition of its own, there only while they run.
var Post = store.Post{ID: "selection-probe", AuthorID: "selection-probe", Title: "The selection probe's post",
	Body: "Written and deleted by the deployment's selection probe (lambda/probe).", Status: store.StatusPublished,
	CreatedAt: "2000-01-01T00:00:00.000Z", UpdatedAt: "2000-01-01T00:00:00.000Z"}

// Decide writes Post with put, runs the probes on it, deletes it with remove
// and returns their verdict. It fails when the shapes disagree (ErrDisagree)
// unless first-occurrence is pinned, and when every-occurrence is pinned
// (SELECTION_READING) but AppSync writes less.
func Decide(ctx context.Context, send Send, put, remove func(context.Context) error, pinned string) (appsync.Reading, []Shape, error) {
	if err := put(ctx); err != nil {
		return appsync.FirstOccurrence, nil, fmt.Errorf("writing the probes' post: %w", err)
	}
	shapes, err := Run(ctx, send, Post.ID)
	if rerr := remove(ctx); rerr != nil && err == nil {
		err = fmt.Errorf("deleting the probes' post %s: %w", store.PostPK(Post.ID), rerr)
	}
	if err != nil {
		return appsync.FirstOccurrence, shapes, err
	}
	verdict, err := Verdict(shapes)
	switch {
	case err != nil && pinned == appsync.FirstOccurrence.String():
		return appsync.FirstOccurrence, shapes, nil // right under every shape's reading
	case err != nil:
		return verdict, shapes, fmt.Errorf("%w: the function is right under both only as first-occurrence; pin it with -c selectionReading=first-occurrence", err)
	}
	if pinned == appsync.EveryOccurrence.String() && verdict != appsync.EveryOccurrence {
		return verdict, shapes, errors.New("the function is pinned to every-occurrence (-c selectionReading), and AppSync writes the first occurrence's selection only: " +
			"queries selecting a field twice would be answered wrong; deploy without it, or with -c selectionReading=first-occurrence")
	}
	return verdict, shapes, nil
}

// Signed returns a Send that posts to the GraphQL endpoint url as an IAM
// caller: each request signed (Signature V4, service appsync) with cfg's
// credentials (awsenv.GraphQL).
func Signed(client aws.HTTPClient, cfg aws.Config, url string) Send {
	return func(ctx context.Context, query string, vars map[string]any, headers ...string) (Response, error) {
		resp, raw, err := awsenv.GraphQL(ctx, client, cfg, url, query, vars, headers...)
		if err != nil {
			return Response{}, err
		}
		return decodeResponse(resp.StatusCode, raw)
	}
}

// ReadResponse reads a GraphQL response from an HTTP one (at most 1 MB of
// it), or returns err, the request's failure.
func ReadResponse(resp *http.Response, err error) (Response, error) {
	if err != nil {
		return Response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return Response{}, err
	}
	return decodeResponse(resp.StatusCode, raw)
}

// decodeResponse is the GraphQL response in raw, an HTTP response's body.
func decodeResponse(status int, raw []byte) (Response, error) {
	var r Response
	if err := json.Unmarshal(raw, &r); err != nil {
		return Response{}, fmt.Errorf("HTTP %d, not a GraphQL response: %.200s", status, strings.TrimSpace(string(raw)))
	}
	return r, nil
}
