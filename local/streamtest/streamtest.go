// Package streamtest is a table with its stream and the projector its
// records go to, as a test of a stream feature wires them.
package streamtest // feature: projector

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/hotkeys" // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
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
	Calls  *storetest.Recorder // what the projector asked of DynamoDB
	Done   *streams.Checkpoints
}

// NewProjected returns the table and its projector, applying the wired
// features' batch steps and projections (each made on the projector's own
// store, which records its requests in Calls) to the records that filters
// match, 100 a batch, bisected and retried 3 times. Both stores are as the
// functions make them (Wired).
func NewProjected(t *testing.T, filters []map[string]any, projections ...func(*store.Store) projector.Projection) *Projected {
	s, client := storetest.NewStreamStore(t, projectedUsers(), storetest.Wired...)
	return project(t, s, client, filters, projections)
}

// NewProjectedOver is NewProjected over a table that holds data (and the
// users) before its stream is turned on: their writes leave no records
// for Drain. For a large load: DynamoDB Local's writes to a table with a
// stream slow as the records of the streams of the tables before it pile
// up (10,000 follows a test: 3 s the first time, 44 s the second, 75 s the
// third, in one process).
func NewProjectedOver(t *testing.T, data store.Dataset, filters []map[string]any, projections ...func(*store.Store) projector.Projection) *Projected {
	t.Helper()
	client := storetest.Client(t)
	table := storetest.NewTable(t, client)
	data.Users = append(projectedUsers().Users, data.Users...)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Minute) // a load past the store's 20 seconds without a deadline
	defer cancel()
	s := storetest.New(client, table, storetest.Wired...)
	if err := s.Load(ctx, data); err != nil {
		t.Fatalf("load data: %v", err)
	}
	stream := ddblocal.CreateTableInput(store.Schema, table).StreamSpecification
	if _, err := client.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(table), StreamSpecification: stream}); err != nil {
		t.Fatalf("turn the stream of %s on: %v", table, err)
	}
	return project(t, s, client, filters, projections)
}

// projectedUsers are the users a projected table starts with: the
// sample's, and dave.
func projectedUsers() store.Dataset {
	return store.Dataset{Users: append(sample.Data().Users,
		store.User{ID: "u_dave", Handle: "dave", Name: "Dave", CreatedAt: "2024-05-01T00:00:00.000Z"})}
}

// project is the projector of s's table, applying the wired batch steps
// and projections to the records filters match.
func project(t *testing.T, s *store.Store, client *dynamodb.Client, filters []map[string]any, projections []func(*store.Store) projector.Projection) *Projected {
	t.Helper()
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	calls := storetest.NewRecorder(client)
	ps := storetest.New(calls, s.Table(), storetest.Wired...)
	var applied []projector.Projection
	for _, p := range projections {
		applied = append(applied, p(ps))
	}
	var batches []projector.Batch
	batches = append(batches, hotkeys.NewTallies(ps)) // feature: hotkeys
	fn := lambda.NewHandler(projector.New(slog.New(slog.NewJSONHandler(io.Discard, nil)), batches, applied...).Handle)
	api := ddblocal.StreamsClient(storetest.Endpoint(t))
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
