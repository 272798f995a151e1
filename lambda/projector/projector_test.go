package projector_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// streamTest is a table with its stream, and the projector (no projection:
// its own tallies) applying what drain reads of it.
type streamTest struct {
	t      *testing.T
	s      *store.Store
	poller *streams.Poller
	api    streams.API
	arn    string
	fn     streams.Function
	calls  *storetest.Recorder // what the projector asked of DynamoDB
	done   *streams.Checkpoints
}

func newStreamTest(t *testing.T) *streamTest {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: append(sample.Data().Users,
		store.User{ID: "u_dave", Handle: "dave", Name: "Dave", CreatedAt: "2024-05-01T00:00:00.000Z"})})
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	calls := storetest.NewRecorder(client)
	ps := store.New(calls, s.Table(), cursor.New(storetest.TokenKey))
	fn := lambda.NewHandler(projector.New(ps, slog.New(slog.NewJSONHandler(io.Discard, nil))).Handle)
	api := ddblocal.StreamsClient(storetest.Endpoint(t))
	done := &streams.Checkpoints{}
	p := streams.New(api, arn, fn, streams.Config{BatchSize: 100, MaxRetries: 3, Bisect: true, Filter: streams.Matches(projector.StreamFilters)}, done)
	return &streamTest{t: t, s: s, poller: p, api: api, arn: arn, fn: fn, calls: calls, done: done}
}

// drain applies everything written so far.
func (f *streamTest) drain() {
	f.t.Helper()
	if _, err := f.poller.Poll(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
}

func (f *streamTest) must(_ any, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}
