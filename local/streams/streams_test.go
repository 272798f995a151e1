package streams_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// recorder is a function that records every record it is sent, as JSON
// decoded into events.DynamoDBEvent, and answers with fail's failures (or
// fails the invocation when fail returns an error).
type recorder struct {
	mu          sync.Mutex
	invocations [][]events.DynamoDBEventRecord
	fail        func(call int, recs []events.DynamoDBEventRecord) ([]string, error)
}

func (r *recorder) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	var ev events.DynamoDBEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	r.mu.Lock()
	call := len(r.invocations)
	r.invocations = append(r.invocations, ev.Records)
	r.mu.Unlock()
	var failed []string
	if r.fail != nil {
		var err error
		if failed, err = r.fail(call, ev.Records); err != nil {
			return nil, err
		}
	}
	resp := events.DynamoDBEventResponse{}
	for _, s := range failed {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: s})
	}
	return json.Marshal(resp)
}

// delivered returns the sequence numbers of every record delivered, in order
// of delivery, with the number of times each came.
func (r *recorder) delivered() (order []string, times map[string]int) {
	times = map[string]int{}
	for _, recs := range r.invocations {
		for _, rec := range recs {
			if times[rec.Change.SequenceNumber] == 0 {
				order = append(order, rec.Change.SequenceNumber)
			}
			times[rec.Change.SequenceNumber]++
		}
	}
	return order, times
}

func newPoller(t *testing.T, client *dynamodb.Client, table string, fn streams.Function, cfg streams.Config, cp *streams.Checkpoints) *streams.Poller {
	t.Helper()
	arn, err := ddblocal.StreamARN(t.Context(), client, table)
	if err != nil {
		t.Fatal(err)
	}
	return streams.New(ddblocal.StreamsClient(storetest.Endpoint(t)), arn, fn, cfg, cp)
}

func poll(t *testing.T, p *streams.Poller) int {
	t.Helper()
	n, err := p.Poll(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// The store's writes arrive as Lambda sends them: each item's change, in
// order, with its keys and both images, as the JSON of an
// events.DynamoDBEvent.
func TestRecordsArriveAsLambdaSendsThem(t *testing.T) {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: sample.Data().Users})
	fn := &recorder{}
	p := newPoller(t, client, s.Table(), fn, streams.Config{BatchSize: 100, Region: "us-east-1"}, &streams.Checkpoints{})
	poll(t, p) // the users
	fn.invocations = nil
	ctx := t.Context()
	post, err := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "Hi", Body: "body", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PublishPost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.DeletePost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	poll(t, p)
	var got []string
	for _, recs := range fn.invocations {
		for _, r := range recs {
			if r.EventSource != "aws:dynamodb" || r.EventVersion != "1.1" || r.AWSRegion != "us-east-1" || r.EventSourceArn == "" || r.Change.StreamViewType != "NEW_AND_OLD_IMAGES" {
				t.Errorf("record %+v", r)
			}
			if sk := r.Change.Keys["sk"].String(); sk == store.SKMetadata && r.Change.Keys["pk"].String() == store.PostPK(post.ID) {
				status := func(img map[string]events.DynamoDBAttributeValue) string {
					if v, ok := img["status"]; ok {
						return v.String()
					}
					return "-"
				}
				got = append(got, r.EventName+" "+status(r.Change.OldImage)+">"+status(r.Change.NewImage))
			}
		}
	}
	if want := []string{"INSERT ->DRAFT", "MODIFY DRAFT>PUBLISHED", "REMOVE PUBLISHED>-"}; !slices.Equal(got, want) {
		t.Errorf("the post's changes: %v, want %v", got, want)
	}
}

// Batches hold at most BatchSize records; what the filter leaves out is
// never delivered, yet checkpointed; a poller started again with the same
// checkpoints delivers nothing twice.
func TestBatchesFiltersAndCheckpoints(t *testing.T) {
	s, client := storetest.NewStreamStore(t, sample.Data())
	ctx := t.Context()
	for i := range 120 {
		if _, err := s.CreateComment(ctx, sample.Carol, sample.HelloPost, fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
	onlyComments := func(r events.DynamoDBEventRecord) bool {
		sk := r.Change.Keys["sk"].String()
		return len(sk) > len(store.CommentPrefix) && sk[:len(store.CommentPrefix)] == store.CommentPrefix
	}
	fn := &recorder{}
	cp := &streams.Checkpoints{}
	p := newPoller(t, client, s.Table(), fn, streams.Config{BatchSize: 50, Filter: onlyComments}, cp)
	read := poll(t, p)
	order, times := fn.delivered()
	if len(order) != 122 { // the sample's two, and 120
		t.Errorf("%d comment records delivered, want 122 (of %d read)", len(order), read)
	}
	for _, recs := range fn.invocations {
		if len(recs) > 50 {
			t.Errorf("a batch of %d records", len(recs))
		}
		for _, r := range recs {
			if !onlyComments(r) {
				t.Errorf("a record the filter leaves out was delivered: %v", r.Change.Keys)
			}
		}
	}
	for s, n := range times {
		if n != 1 {
			t.Errorf("record %s delivered %d times", s, n)
		}
	}
	again := &recorder{}
	if n := poll(t, newPoller(t, client, s.Table(), again, streams.Config{BatchSize: 50, Filter: onlyComments}, cp)); n != 0 || len(again.invocations) != 0 {
		t.Errorf("a poller started again read %d records, invoked %d times; want nothing", n, len(again.invocations))
	}
	t.Logf("%d records read, %d delivered in %d invocations", read, len(order), p.Invocations)
}

func writeComments(t *testing.T, s *store.Store, n int) {
	t.Helper()
	for i := range n {
		if _, err := s.CreateComment(t.Context(), sample.Carol, sample.HelloPost, fmt.Sprint("c", i)); err != nil {
			t.Fatal(err)
		}
	}
}

// A batch whose function reports item failures is sent again from the
// lowest one: the records before it are not sent again, the ones after are.
func TestReportedFailuresAreRetriedFromTheLowest(t *testing.T) {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: sample.Data().Users})
	fn := &recorder{fail: func(call int, recs []events.DynamoDBEventRecord) ([]string, error) {
		if call == 0 && len(recs) >= 3 { // the first time: the 3rd, and the last
			return []string{recs[len(recs)-1].Change.SequenceNumber, recs[2].Change.SequenceNumber}, nil
		}
		return nil, nil
	}}
	p := newPoller(t, client, s.Table(), fn, streams.Config{BatchSize: 100, MaxRetries: 3}, &streams.Checkpoints{})
	poll(t, p)
	if len(fn.invocations) != 2 {
		t.Fatalf("%d invocations, want 2", len(fn.invocations))
	}
	first, second := fn.invocations[0], fn.invocations[1]
	if !slices.EqualFunc(first[2:], second, func(a, b events.DynamoDBEventRecord) bool { return a.Change.SequenceNumber == b.Change.SequenceNumber }) {
		t.Errorf("the retry sent %d records; want the %d from the lowest failure on", len(second), len(first)-2)
	}
}

// A record that fails its batch every time ends, with bisection, alone in
// the on-failure destination after the retries; every other record is
// applied, and the shard moves on. An unknown or empty identifier fails the
// whole batch.
func TestAPoisonRecordEndsInTheOnFailureDestination(t *testing.T) {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: sample.Data().Users})
	var poison string
	fn := &recorder{}
	fn.fail = func(call int, recs []events.DynamoDBEventRecord) ([]string, error) {
		if poison == "" {
			poison = recs[len(recs)/3].Change.SequenceNumber
		}
		for _, r := range recs {
			if r.Change.SequenceNumber == poison {
				return nil, errors.New("cannot read this image")
			}
		}
		return nil, nil
	}
	var failures []streams.Failure
	p := newPoller(t, client, s.Table(), fn, streams.Config{BatchSize: 100, MaxRetries: 2, Bisect: true,
		OnFailure: func(f streams.Failure) { failures = append(failures, f) }}, &streams.Checkpoints{})
	poll(t, p)
	if len(failures) != 1 || failures[0].Records != 1 || failures[0].StartSequence != poison || failures[0].Condition != "RetryAttemptsExhausted" {
		t.Fatalf("failures %+v; want the poison record alone", failures)
	}
	// Every record but the poison reached a successful invocation.
	applied := map[string]bool{}
	for _, recs := range fn.invocations {
		if !slices.ContainsFunc(recs, func(r events.DynamoDBEventRecord) bool { return r.Change.SequenceNumber == poison }) {
			for _, r := range recs {
				applied[r.Change.SequenceNumber] = true
			}
		}
	}
	order, _ := fn.delivered()
	if len(applied) != len(order)-1 {
		t.Errorf("%d of %d records applied; want all but the poison", len(applied), len(order))
	}
	name := "Bob B."
	if _, err := s.UpdateUser(t.Context(), sample.Bob, &name, nil); err != nil { // the shard moves on
		t.Fatal(err)
	}
	before := len(fn.invocations)
	poll(t, p)
	if len(fn.invocations) != before+1 {
		t.Errorf("after the poison: %d invocations for one new write", len(fn.invocations)-before)
	}

	whole := &recorder{fail: func(call int, recs []events.DynamoDBEventRecord) ([]string, error) {
		if call == 0 {
			return []string{"no such record"}, nil
		}
		return nil, nil
	}}
	q := newPoller(t, client, s.Table(), whole, streams.Config{BatchSize: 100, MaxRetries: 1}, &streams.Checkpoints{})
	poll(t, q)
	if len(whole.invocations) != 2 || len(whole.invocations[0]) != len(whole.invocations[1]) {
		t.Errorf("an unknown identifier: invocations of %d records; want the whole batch twice", len(whole.invocations))
	}
}

// A process killed mid-batch loses nothing: the poller started again with
// its checkpoints sends the batch that was in flight, and nothing before it.
func TestARestartMidStreamLosesNothing(t *testing.T) {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: sample.Data().Users})
	ctx, kill := context.WithCancel(t.Context())
	fn := &recorder{}
	fn.fail = func(call int, recs []events.DynamoDBEventRecord) ([]string, error) {
		if call == 1 {
			kill() // the process dies during its second invocation
			return nil, context.Canceled
		}
		return nil, nil
	}
	cp := &streams.Checkpoints{}
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	api := ddblocal.StreamsClient(storetest.Endpoint(t))
	first := streams.New(api, arn, fn, streams.Config{BatchSize: 2, MaxRetries: 5}, cp)
	if _, err := first.Poll(ctx); err == nil {
		t.Fatal("the killed poller finished")
	}
	again := &recorder{}
	poll(t, streams.New(api, arn, again, streams.Config{BatchSize: 2, MaxRetries: 5}, cp))
	_, before := fn.delivered()
	order, _ := again.delivered()
	all := poll(t, streams.New(api, arn, &recorder{}, streams.Config{BatchSize: 100}, &streams.Checkpoints{})) // the whole stream
	seen := map[string]bool{}
	for s := range before {
		seen[s] = true
	}
	dups := 0
	for _, s := range order {
		if seen[s] {
			dups++
		}
		seen[s] = true
	}
	if len(seen) != all || dups > 2 {
		t.Errorf("%d of %d records delivered across the restart, %d twice (want all, and at most the batch in flight)", len(seen), all, dups)
	}
}
