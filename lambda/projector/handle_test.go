package projector_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
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

// tallyStore records the tallies applied, and fails those of the parents
// it is told to.
type tallyStore struct {
	log  *[]string
	fail map[string]bool // by parent
}

func (s tallyStore) ApplyTallies(_ context.Context, parent string, tallies map[int]store.ShardTally) error {
	for n, t := range tallies {
		*s.log = append(*s.log, fmt.Sprintf("tallies %s %d v%d", parent, n, t.Version))
	}
	if s.fail[parent] {
		return errors.New("injected")
	}
	return nil
}

func record(seq string) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
		Keys: map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute("USER#u_a"), "sk": events.NewStringAttribute("FOLLOWS#u_b")}}}
}

func shardRecord(seq, postID string, version int64) events.DynamoDBEventRecord {
	r := record(seq)
	r.Change.Keys = map[string]events.DynamoDBAttributeValue{"pk": events.NewStringAttribute(store.ShardPK(postID, 1)), "sk": events.NewStringAttribute(store.SKShard)}
	r.Change.NewImage = map[string]events.DynamoDBAttributeValue{"shard": events.NewNumberAttribute("1"),
		"version": events.NewNumberAttribute(strconv.FormatInt(version, 10)), "likeCount": events.NewNumberAttribute("2")}
	return r
}

// The projector, whatever its projections: each record to each projection
// in order, the first it cannot apply reported and nothing after it
// applied (Lambda sends it and them again); the batch's tallies first, a
// post's latest once, a failure reported at that post's first record; no
// record started past the deadline's reserve; one cost line an
// invocation.
func TestHandleAppliesInOrderAndReportsTheFirstFailure(t *testing.T) {
	var log []string
	var logs bytes.Buffer
	p := projector.New(tallyStore{log: &log}, slog.New(slog.NewJSONHandler(&logs, nil)),
		applied{"a", &log, map[string]bool{"3": true}}, applied{"b", &log, nil})
	resp, err := p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("1"), shardRecord("2", "p1", 1), record("3"), shardRecord("4", "p1", 2), record("5")}})
	if err != nil || !slices.Equal(failed(resp), []string{"3"}) {
		t.Fatalf("response %+v, %v; want record 3 reported", resp, err)
	}
	want := []string{"tallies POST#p1 1 v2", "a 1", "b 1", "a 2", "b 2", "a 3"}
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
	p = projector.New(tallyStore{log: &log, fail: map[string]bool{"POST#p1": true}}, slog.New(slog.DiscardHandler), applied{"a", &log, nil})
	resp, _ = p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		record("1"), shardRecord("2", "p1", 1), record("3")}})
	if want := []string{"tallies POST#p1 1 v1", "a 1"}; !slices.Equal(failed(resp), []string{"2"}) || !slices.Equal(log, want) {
		t.Errorf("a failed tally: reported %q, applied %q; want 2 reported, %q", failed(resp), log, want)
	}

	log = nil
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond) // within the reserve
	defer cancel()
	resp, _ = projector.New(tallyStore{log: &log}, slog.New(slog.DiscardHandler), applied{"a", &log, nil}).Handle(ctx,
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
