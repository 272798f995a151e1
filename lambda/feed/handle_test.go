package feed_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// postRecord is a hand-made record of a post's own item (the fault cases;
// the rest of the tests read the real stream).
func postRecord(seq, event, id, place string, old bool) events.DynamoDBEventRecord {
	img := map[string]events.DynamoDBAttributeValue{
		"pk": events.NewStringAttribute(store.PostPK(id)), "sk": events.NewStringAttribute(store.SKMetadata),
		"gsi1sk": events.NewStringAttribute(place), "id": events.NewStringAttribute(id),
		"authorId": events.NewStringAttribute(sample.Alice), "status": events.NewStringAttribute(store.StatusPublished),
	}
	r := events.DynamoDBEventRecord{EventName: event, Change: events.DynamoDBStreamRecord{SequenceNumber: seq,
		Keys: map[string]events.DynamoDBAttributeValue{"pk": img["pk"], "sk": img["sk"]}}}
	if old {
		r.Change.OldImage = img
	} else {
		r.Change.NewImage = img
	}
	return r
}

// A record the projector cannot apply (a place that holds no ULID) is
// reported, and nothing after it is applied: Lambda sends it and them
// again, then the on-failure destination has it. A TTL deletion changes
// nothing. Each invocation writes one cost line.
func TestFaultsAndTheCostLine(t *testing.T) {
	s, client := storetest.NewStore(t, sample.Data())
	if _, err := s.Follow(t.Context(), sample.Carol, sample.Alice); err != nil {
		t.Fatal(err)
	}
	post, err := s.CreatePost(t.Context(), sample.Alice, store.NewPost{Title: "now", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	p := projector.New(slog.New(slog.NewJSONHandler(&logs, nil)), nil, feed.NewProjection(s))
	place := store.PublishedSK(post.ID)
	resp, err := p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{
		postRecord("1", "INSERT", post.ID, place, false),
		postRecord("2", "INSERT", post.ID, "POST#not-a-ulid", false),
		postRecord("3", "REMOVE", post.ID, place, true),
	}})
	if err != nil || len(resp.BatchItemFailures) != 1 || resp.BatchItemFailures[0].ItemIdentifier != "2" {
		t.Fatalf("response %+v, %v; want record 2 reported", resp, err)
	}
	if n := storetest.Count(t, client, s.Table(), "", "pk", feed.PK(sample.Carol), "sk", ""); n != 1 {
		t.Errorf("%d entries in carol's feed; want the first record's, the third not applied", n)
	}
	var line map[string]any
	lines := bytes.Split(bytes.TrimSpace(logs.Bytes()), []byte("\n"))
	if err := json.Unmarshal(lines[len(lines)-1], &line); err != nil {
		t.Fatal(err)
	}
	if line["msg"] != "invocation" || line["Records"] != 3.0 || line["Applied"] != 1.0 || line["WriteCapacityUnits"].(float64) <= 0 || line["_aws"] == nil {
		t.Errorf("cost line %v", line)
	}

	ttl := postRecord("4", "REMOVE", post.ID, place, true)
	ttl.UserIdentity = &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"}
	if resp, err := p.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{ttl}}); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("a TTL deletion: %+v, %v", resp, err)
	}
	if n := storetest.Count(t, client, s.Table(), "", "pk", feed.PK(sample.Carol), "sk", ""); n != 1 {
		t.Errorf("a TTL deletion changed carol's feed: %d entries", n)
	}
}
