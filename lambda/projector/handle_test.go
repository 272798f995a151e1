package projector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/projector"
)

// applied records what a projection was handed, and fails the records it
// is told to.
type applied struct {
	name string
	log  *[]string
	fail map[string]bool // by sequence number
}

func (a applied) Apply(_ context.Context, r events.DynamoDBEventRecord) error {
	*a.log = append(*a.log, a.name+" "+r.Change.SequenceNumber)
	if a.fail[r.Change.SequenceNumber] {
		return errors.New("injected")
	}
	return nil
}

// batch records the batches it is handed, and fails from the record it is
// told to (-1: none).
type batch struct {
	log    *[]string
	failAt int
}

func (b batch) ApplyBatch(_ context.Context, records []events.DynamoDBEventRecord) (int, error) {
	*b.log = append(*b.log, fmt.Sprintf("batch of %d", len(records)))
	if b.failAt >= 0 {
		return b.failAt, errors.New("injected")
	}
	return len(records), nil
}

func record(seq string) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
		Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("USER#u_a"), "sk": events.NewStringAttribute("FOLLOWS#u_b")}}}
}

// The projector, whatever its projections: the batch to each of its batch
// steps, then each record to each projection in order, the first it cannot
// apply reported and nothing after it applied (Lambda sends it and them
// again); a batch step's failure reported at the record it names, no
// record from it on handed to a projection (the other steps still have the
// whole batch); no record started past the
// deadline's reserve; one cost line an invocation.
func TestHandleAppliesInOrderAndReportsTheFirstFailure(t *testing.T) {
	var log []string
	var logs bytes.Buffer
	p := projector.New(slog.New(slog.NewJSONHandler(&logs, nil)), []projector.Batch{batch{&log, -1}},
		applied{"a", &log, map[string]bool{"3": true}}, applied{"b", &log, nil})
	resp, err := p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("1"), record("2"), record("3"), record("4"), record("5")}})
	if err != nil || !slices.Equal(failed(resp), []string{"3"}) {
		t.Fatalf("response %+v, %v; want record 3 reported", resp, err)
	}
	want := []string{"batch of 5", "a 1", "b 1", "a 2", "b 2", "a 3"}
	if !slices.Equal(log, want) {
		t.Errorf("applied %q, want %q", log, want)
	}
	var line map[string]any
	lines := bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &line); err != nil {
		t.Fatal(err)
	}
	if line["msg"] != "invocation" || line["Records"] != 5.0 || line["Applied"] != 2.0 || line["_aws"] == nil {
		t.Errorf("cost line %v", line)
	}

	log = nil
	p = projector.New(slog.New(slog.DiscardHandler), []projector.Batch{batch{&log, 1}, batch{&log, -1}}, applied{"a", &log, nil})
	resp, _ = p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("1"), record("2"), record("3")}})
	if want := []string{"batch of 3", "batch of 3", "a 1"}; !slices.Equal(failed(resp), []string{"2"}) || !slices.Equal(log, want) {
		t.Errorf("a failed first step: reported %q, applied %q; want 2 reported, %q", failed(resp), log, want)
	}

	log = nil
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond) // within the reserve
	defer cancel()
	resp, _ = projector.New(slog.New(slog.DiscardHandler), nil, applied{"a", &log, nil}).Handle(ctx,
		events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{record("1"), record("2")}})
	if !slices.Equal(failed(resp), []string{"1"}) || len(log) != 0 {
		t.Errorf("past the reserve: reported %q, applied %q; want 1 reported, none applied", failed(resp), log)
	}
}

func failed(resp events.DynamoDBEventResponse) []string {
	var seqs []string
	for _, f := range resp.BatchItemFailures {
		seqs = append(seqs, f.ItemIdentifier)
	}
	return seqs
}
