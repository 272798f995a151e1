package streams_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// windowed is a windowed function that counts its window's records in its
// state ("n"), and records each invocation.
type windowed struct {
	mu    sync.Mutex
	calls []events.DynamoDBTimeWindowEvent
}

func (w *windowed) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	var ev events.DynamoDBTimeWindowEvent
	if err := json.Unmarshal(payload, &ev); err != nil {
		return nil, err
	}
	w.mu.Lock()
	w.calls = append(w.calls, ev)
	w.mu.Unlock()
	n, _ := strconv.Atoi(ev.State["n"])
	state := map[string]string{"n": strconv.Itoa(n + len(ev.Records))}
	if ev.IsFinalInvokeForWindow {
		state = map[string]string{}
	}
	return json.Marshal(events.DynamoDBTimeWindowEventResponse{TimeWindowEventResponseProperties: events.TimeWindowEventResponseProperties{State: state}})
}

// A window is held across polls and closed once, as Lambda runs it: each
// record's creation time is its own second (DynamoDB Local gives the
// minute), the records of one window come in several invocations, each
// with the state the last returned, and one final invocation closes the
// window with all of them counted, once its end has passed.
func TestAWindowIsHeldAcrossPollsAndClosedOnce(t *testing.T) {
	t.Parallel()
	const size = 5 * time.Second
	client := storetest.Client(t)
	table := storetest.NewStreamTable(t, client)
	fn := &windowed{}
	p := newPoller(t, client, table, fn, streams.Config{BatchSize: 100, Window: size}, &streams.Checkpoints{})
	time.Sleep(time.Until(time.Now().Truncate(size).Add(size + 100*time.Millisecond))) // a window's start
	written, polled := map[string]time.Time{}, map[string]time.Time{}
	for i := range 3 {
		key := fmt.Sprint("item", i)
		written[key] = time.Now()
		if _, err := client.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
			"pk": &types.AttributeValueMemberS{Value: key}, "sk": &types.AttributeValueMemberS{Value: "x"}}}); err != nil {
			t.Fatal(err)
		}
		poll(t, p)
		polled[key] = time.Now()
		time.Sleep(300 * time.Millisecond)
	}
	for len(finals(fn)) < 1 || time.Since(written["item2"]) < 2*size {
		time.Sleep(200 * time.Millisecond)
		poll(t, p)
	}

	perWindow, counted := map[time.Time][]events.DynamoDBTimeWindowEvent{}, map[time.Time]int{}
	for _, ev := range fn.calls {
		perWindow[ev.Window.Start.Time] = append(perWindow[ev.Window.Start.Time], ev)
		for _, r := range ev.Records {
			counted[ev.Window.Start.Time]++
			key := r.Change.Keys["pk"].String()
			if made := r.Change.ApproximateCreationDateTime.Time; made.Before(written[key].Truncate(time.Second)) || made.After(polled[key]) {
				t.Errorf("%s written at %v and read by %v is stamped %v: not to the second", key, written[key], polled[key], made)
			}
			if made, end := r.Change.ApproximateCreationDateTime.Time, ev.Window.Start.Add(size); made.Before(ev.Window.Start.Time) || !made.Before(end) {
				t.Errorf("a record of %v delivered in the window from %v", made, ev.Window.Start.Time)
			}
		}
	}
	held := 0
	for start, calls := range perWindow {
		last := calls[len(calls)-1]
		if n := len(finals(&windowed{calls: calls})); n != 1 || !last.IsFinalInvokeForWindow {
			t.Errorf("the window from %v: %d final invocations, the last one final: %v (want one, last)", start, n, last.IsFinalInvokeForWindow)
		}
		if got := last.State["n"]; got != strconv.Itoa(counted[start]) {
			t.Errorf("the window from %v: its final invocation's state counts %s records, its invocations held %d", start, got, counted[start])
		}
		held = max(held, len(calls)-1)
	}
	if held < 2 {
		t.Errorf("no window was held across two polls or more: %d windows for 3 records written 300 ms apart in a %v window", len(perWindow), size)
	}
}

func finals(w *windowed) []events.DynamoDBTimeWindowEvent {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []events.DynamoDBTimeWindowEvent
	for _, ev := range w.calls {
		if ev.IsFinalInvokeForWindow {
			out = append(out, ev)
		}
	}
	return out
}
