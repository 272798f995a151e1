package live_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/live"
	"github.com/example/appsync-dynamo/lambda/store"
)

type calls struct {
	got  []string
	fail error
}

func (c *calls) InvalidatePost(_ context.Context, postID, subscription string) error {
	c.got = append(c.got, postID+" "+subscription)
	return c.fail
}

func (c *calls) PushFeed(context.Context, string, string, []string) error {
	return errors.New("a deletion pushes nothing")
}

func record(event, pk, sk string) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventName: event, Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{
		store.AttrPK: events.NewStringAttribute(pk), store.AttrSK: events.NewStringAttribute(sk)}}}
}

// A post's own item removed ends its subscriptions, one call a
// subscription field, the same again for the same record come again; any
// other record ends nothing; a call that fails fails the record, for the
// stream to retry.
func TestADeletedPostsSubscriptionsEnd(t *testing.T) {
	c := &calls{}
	p := live.NewProjection(nil, c)
	removed := record("REMOVE", store.PostPK("p1"), store.SKMetadata)
	for _, r := range []events.DynamoDBEventRecord{
		removed,
		record("MODIFY", store.PostPK("p1"), store.SKMetadata),
		record("INSERT", store.PostPK("p2"), store.SKMetadata),
		record("REMOVE", store.PostPK("p1"), store.SKCount),
		record("REMOVE", store.PostPK("p1"), store.CommentSK("c1")),
		record("REMOVE", store.UserPK("u1"), store.SKMetadata),
		removed,
	} {
		if err := p.Apply(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"p1 onCreateComment", "p1 onPostActivity", "p1 onCreateComment", "p1 onPostActivity"}
	if !slices.Equal(c.got, want) {
		t.Errorf("calls %q, want %q", c.got, want)
	}
	c.fail = errors.New("throttled")
	if err := p.Apply(t.Context(), removed); err == nil || !strings.Contains(err.Error(), "throttled") {
		t.Errorf("a failed call: %v, want the record failed", err)
	}
}

// The API's answers: a GraphQL error, an HTTP failure or a response that is
// not GraphQL fail the call; a data answer does not.
func TestTheAPIsAnswer(t *testing.T) {
	for _, c := range []struct {
		status int
		body   string
		fails  bool
	}{
		{200, `{"data":{"invalidatePost":"p1"}}`, false},
		{200, `{"data":{"invalidatePost":null},"errors":[{"errorType":"Conflict","message":"the post exists"}]}`, true},
		{401, `{"errors":[{"errorType":"UnauthorizedException","message":"no"}]}`, true},
		{502, `Bad Gateway`, true},
		{500, `{}`, true},
	} {
		api := live.API(func(context.Context, string, map[string]any) (int, []byte, error) {
			return c.status, []byte(c.body), nil
		})
		if err := api.InvalidatePost(t.Context(), "p1", "onCreateComment"); (err != nil) != c.fails {
			t.Errorf("HTTP %d %s: %v, want failing %v", c.status, c.body, err, c.fails)
		}
	}
}

// A record of a post published more than a day before it (a load of the
// table, or a restore) pushes nothing; one published now is pushed.
func TestOnlyANewPostIsPushed(t *testing.T) {
	at := func(when time.Time) events.DynamoDBEventRecord {
		r := record("INSERT", store.PostPK("p1"), store.SKMetadata)
		r.Change.NewImage = map[string]events.DynamoDBAttributeValue{
			"authorId": events.NewStringAttribute("u_a"), "status": events.NewStringAttribute(store.StatusPublished),
			store.AttrGSI1SK: events.NewStringAttribute(store.PublishedSK(ulid.MustNew(ulid.Timestamp(when), nil).String()))}
		return r
	}
	readers := &followed{ids: []string{"u_r"}}
	c := &calls{}
	p := live.NewProjection(readers, c)
	if err := p.Apply(t.Context(), at(time.Now().Add(-25*time.Hour))); err != nil || readers.reads != 0 {
		t.Errorf("a post published 25 hours before its record: %v, %d reads", err, readers.reads)
	}
	if err := p.Apply(t.Context(), at(time.Now())); err == nil || readers.reads == 0 {
		t.Errorf("a post published now was not pushed (%v, %d reads)", err, readers.reads)
	}
}

// A record the projection cannot read as a post published (keys or an
// author that are not strings, no place among the author's posts, a draft)
// pushes nothing and is not an error: it is not a publication.
func TestAMalformedRecordPushesNothing(t *testing.T) {
	place := events.NewStringAttribute(store.PublishedSK(ulid.Make().String()))
	author, status := events.NewStringAttribute("u_a"), events.NewStringAttribute(store.StatusPublished)
	for name, r := range map[string]events.DynamoDBEventRecord{
		"no keys":         {EventName: "INSERT"},
		"a number key":    {EventName: "INSERT", Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{store.AttrPK: events.NewNumberAttribute("1"), store.AttrSK: events.NewStringAttribute(store.SKMetadata)}}},
		"a number author": withImage(map[string]events.DynamoDBAttributeValue{"authorId": events.NewNumberAttribute("7"), "status": status, store.AttrGSI1SK: place}),
		"no author":       withImage(map[string]events.DynamoDBAttributeValue{"status": status, store.AttrGSI1SK: place}),
		"no place":        withImage(map[string]events.DynamoDBAttributeValue{"authorId": author, "status": status}),
		"a draft":         withImage(map[string]events.DynamoDBAttributeValue{"authorId": author, "status": events.NewStringAttribute(store.StatusDraft), store.AttrGSI1SK: place}),
		"a number place":  withImage(map[string]events.DynamoDBAttributeValue{"authorId": author, "status": status, store.AttrGSI1SK: events.NewNumberAttribute("3")}),
	} {
		readers := &followed{ids: []string{"u_b"}}
		c := &calls{}
		if err := live.NewProjection(readers, c).Apply(t.Context(), r); err != nil || readers.reads != 0 || len(c.got) != 0 {
			t.Errorf("%s: %v, %d reads, %d calls; want nothing", name, err, readers.reads, len(c.got))
		}
	}
}

func withImage(img map[string]events.DynamoDBAttributeValue) events.DynamoDBEventRecord {
	r := record("INSERT", store.PostPK("p1"), store.SKMetadata)
	r.Change.NewImage = img
	return r
}

type followed struct {
	ids   []string
	reads int
}

func (f *followed) Through(context.Context, string) (string, error) { f.reads++; return "", nil }

func (f *followed) FollowerIDs(context.Context, string) ([]string, error) { return f.ids, nil }
