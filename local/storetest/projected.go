package storetest

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/hotkeys" // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/streams"
)

// Projected is a table with its stream (the sample's users, and dave),
// and the projector that Drain hands the stream's records to, as a test
// wires it.
type Projected struct {
	T      *testing.T
	S      *store.Store // the table, as the API writes it
	Poller *streams.Poller
	API    streams.API
	ARN    string
	Fn     streams.Function
	Calls  *Recorder // what the projector asked of DynamoDB
	Done   *streams.Checkpoints
}

// NewProjected returns the table and its projector, applying the wired
// features' batch steps and projections (each made on the projector's own
// store, which records its requests in Calls) to the records that filters
// match, 100 a batch, bisected and retried 3 times. Both stores are as the
// functions make them (Wired).
func NewProjected(t *testing.T, filters []map[string]any, projections ...func(*store.Store) projector.Projection) *Projected {
	s, client := NewStreamStore(t, store.Dataset{Users: append(sample.Data().Users,
		store.User{ID: "u_dave", Handle: "dave", Name: "Dave", CreatedAt: "2024-05-01T00:00:00.000Z"})}, Wired...)
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	calls := NewRecorder(client)
	ps := New(calls, s.Table(), Wired...)
	var applied []projector.Projection
	for _, p := range projections {
		applied = append(applied, p(ps))
	}
	var batches []projector.Batch
	batches = append(batches, hotkeys.NewTallies(ps)) // feature: hotkeys
	fn := lambda.NewHandler(projector.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), batches, applied...).Handle)
	api := ddblocal.StreamsClient(Endpoint(t))
	done := &streams.Checkpoints{}
	p := streams.New(api, arn, fn, streams.Config{BatchSize: 100, MaxRetries: 3, Bisect: true, Filter: streams.Matches(filters)}, done)
	return &Projected{T: t, S: s, Poller: p, API: api, ARN: arn, Fn: fn, Calls: calls, Done: done}
}

// Drain applies everything written so far.
func (f *Projected) Drain() {
	f.T.Helper()
	if _, err := f.Poller.Poll(f.T.Context()); err != nil {
		f.T.Fatal(err)
	}
}

// Must fails the test with err, if any.
func (f *Projected) Must(_ any, err error) {
	f.T.Helper()
	if err != nil {
		f.T.Fatal(err)
	}
}
