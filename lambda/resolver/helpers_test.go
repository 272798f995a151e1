package resolver_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// newHandler returns the Lambda handler, wrapped as aws-lambda-go wraps it,
// over a new table loaded with data, reading selections as make dev's
// AppSync writes them (appsync.EveryOccurrence): the tests of what a
// selection spares read it so.
func newHandler(t *testing.T, data store.Dataset, opts ...store.Option) lambda.Handler {
	t.Helper()
	return readingHandler(t, appsync.EveryOccurrence, data, opts...)
}

// readingHandler is newHandler reading selections under r.
func readingHandler(t *testing.T, r appsync.Reading, data store.Dataset, opts ...store.Option) lambda.Handler {
	t.Helper()
	s, _ := storetest.NewStore(t, data, opts...)
	return lambda.NewHandler(resolver.New(s, quietLog(), append(wired(s), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(r))...))
}

// directHandler is newHandler with the replies direct Lambda resolvers get:
// without answers for child fields, so that each child is invoked with its
// parent's object as source, as the prefetch layout has it.
func directHandler(t *testing.T, data store.Dataset) lambda.Handler {
	t.Helper()
	s, _ := storetest.NewStore(t, data)
	return lambda.NewHandler(resolver.New(s, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithoutAnswers(),
		resolver.WithSelectionReading(appsync.EveryOccurrence)))
}

func quietLog() *slog.Logger { return slog.New(slog.NewJSONHandler(io.Discard, nil)) }

// sampleHandler is newHandler over the seed documents' sample data.
func sampleHandler(t *testing.T) lambda.Handler {
	t.Helper()
	return newHandler(t, sample.Data())
}

// invoke sends payload through the handler and returns its reply, the error
// AppSync would see (Type and Message), and the DynamoDB calls it made.
func invoke(t *testing.T, h lambda.Handler, payload []byte) (json.RawMessage, *messages.InvokeResponse_Error, *cost.Meter) {
	t.Helper()
	ctx, m := cost.WithMeter(context.Background())
	out, err := h.Invoke(ctx, payload)
	if err != nil {
		var ie messages.InvokeResponse_Error
		if !errors.As(err, &ie) {
			t.Fatalf("handler returned %T (%v); want messages.InvokeResponse_Error so AppSync shows its type", err, err)
		}
		return nil, &ie, m
	}
	if !json.Valid(out) {
		t.Fatalf("handler returned invalid JSON: %s", out)
	}
	return out, nil, m
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
