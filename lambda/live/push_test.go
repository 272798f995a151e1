package live_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/live"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/prices"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streamtest"
)

// lambda is the Caller that answers pushFeed as the Lambda does
// (Pushes.Push, over its own store), and counts what each reader receives:
// each reader of a publication, once a publication. Before a call, do runs
// with the call's number (from 1); its error kills the projector there:
// before the call reaches the API, or, with landed, after its publication.
type lambda struct {
	pushes *live.Pushes
	before func(n int) error
	landed bool

	mu           sync.Mutex
	calls        int
	publications [][]string
	received     map[string]int
	dynamodb     []cost.Call // what the Lambda asked of DynamoDB
}

var errKilled = errors.New("the projector was killed")

func (l *lambda) InvalidatePost(context.Context, string, string) error { return nil }

func (l *lambda) PushFeed(ctx context.Context, postID, after string, readers []string) error {
	l.mu.Lock()
	l.calls++
	n := l.calls
	l.mu.Unlock()
	var killed error
	if l.before != nil {
		killed = l.before(n)
	}
	if killed != nil && !l.landed {
		return killed
	}
	metered, meter := cost.WithMeter(ctx)
	p, err := l.pushes.Push(metered, postID, after, readers)
	l.mu.Lock()
	l.dynamodb = append(l.dynamodb, meter.Calls()...)
	l.mu.Unlock()
	if err != nil {
		return &live.APIError{Type: errs.KindOf(err).String(), Message: err.Error()}
	}
	l.mu.Lock()
	l.publications = append(l.publications, p.Readers)
	for _, r := range p.Readers {
		l.received[r]++
	}
	l.mu.Unlock()
	return killed
}

// followers are n followers of alice, with 36-character IDs, as Cognito's
// subs are.
func followers(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i)
	}
	return ids
}

// pushing is a table with followers of alice and its projector applying the
// live projection through l, in chunks of chunkBytes.
func pushing(t *testing.T, l *lambda, readers []string, chunkBytes int) *streamtest.Projected {
	f := streamtest.NewProjectedOver(t, store.Dataset{Follows: followsOf(sample.Alice, readers)}, live.StreamFilters, func(ps *store.Store) projector.Projection {
		p := live.NewProjection(live.NewPushes(ps), l)
		live.SetChunkBytes(p, chunkBytes)
		return p
	})
	l.pushes, l.received = live.NewPushes(f.S), map[string]int{}
	f.Drain()
	return f
}

// A post by an author with 10,000 followers reaches each once, in three
// publications, each within MaxReaderBytes (and so AppSync's message
// limit, with the largest post: TestTheLargestFeedPushArrivesWhole); a
// draft reaches no one until it is published.
func TestAPostReachesTenThousandFollowersOnce(t *testing.T) {
	readers := followers(10_000)
	l := &lambda{}
	f := pushing(t, l, readers, live.MaxReaderBytes)
	draft, err := f.S.CreatePost(t.Context(), sample.Alice, store.NewPost{Title: "Soon", Body: "b", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Drain()
	if l.calls != 0 {
		t.Fatalf("a draft was pushed %d times", l.calls)
	}
	f.Must(f.S.PublishPost(t.Context(), sample.Alice, draft.ID))
	f.Drain()
	if len(l.publications) != 3 {
		t.Errorf("%d publications, want 3", len(l.publications))
	}
	for i, p := range l.publications {
		if n := live.ReaderBytes(p); n > live.MaxReaderBytes {
			t.Errorf("publication %d: %d bytes of readers", i, n)
		}
	}
	checkOnce(t, l, readers)

	// What it cost: the projector's reads (the marker, the followers), the
	// Lambda's (the post, the follows, the marker's writes), AppSync's
	// requests and deliveries, the Lambda's invocations.
	ctx, meter := cost.WithMeter(t.Context())
	f.Must(live.NewPushes(f.S).Through(ctx, draft.ID))
	f.Must(live.NewPushes(f.S).FollowerIDs(ctx, sample.Alice))
	calls := append(meter.Calls(), l.dynamodb...)
	var read, write float64
	for _, c := range calls {
		read, write = read+c.Read, write+c.Write
	}
	n := len(l.publications)
	dollars := prices.PerMillion(read, write)/1e6 + float64(n)*(prices.AppSyncOperation+prices.LambdaRequest) +
		float64(len(readers))*prices.AppSyncRealTimeUpdate
	var follows float64
	for _, c := range l.dynamodb {
		if c.Operation == "BatchGetItem" {
			follows += c.Read
		}
	}
	deliveries := float64(len(readers))
	doc, err := os.ReadFile("../../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, says := range []string{
		fmt.Sprintf("%s readers of 36-character IDs", humanize(len(l.publications[0]))),
		fmt.Sprintf("%d publications, %d DynamoDB requests (%g read units, %g write units), $%.4f", n, len(calls), read, write, dollars),
		fmt.Sprintf("of which $%.4f are the 10,000 deliveries", deliveries*prices.AppSyncRealTimeUpdate),
		fmt.Sprintf("$%.4f the strongly consistent reads of the follows", prices.PerMillion(follows, 0)/1e6),
		fmt.Sprintf("about $%.4f, half", (1+deliveries)*prices.AppSyncEventsOperation),
		fmt.Sprintf("and 10,000 deliveries, about $%.4f", 2*deliveries*prices.AppSyncEventsOperation),
	} {
		if !strings.Contains(text, says) {
			t.Errorf("docs/live.md does not say %q", says)
		}
	}
}

// checkOnce checks that each of readers received the post once, and no one
// else anything.
func checkOnce(t *testing.T, l *lambda, readers []string) {
	t.Helper()
	for _, r := range readers {
		if n := l.received[r]; n != 1 {
			t.Errorf("%s received the post %d times", r, n)
			return
		}
	}
	if len(l.received) != len(readers) {
		t.Errorf("%d readers received it, want %d", len(l.received), len(readers))
	}
}

// A projector killed before any of a post's calls, or after any of them
// landed, and its record delivered again (the stream's retry), then once
// more: every follower receives the post once, none twice.
func TestAKilledProjectorPushesEachReaderOnce(t *testing.T) {
	readers := followers(300)
	const chunkBytes = 4_000 // 102 readers: three chunks
	for _, landed := range []bool{false, true} {
		for at := 1; at <= 3; at++ {
			t.Run(fmt.Sprintf("landed=%v/call%d", landed, at), func(t *testing.T) {
				killed := false
				l := &lambda{landed: landed, before: func(n int) error {
					if n == at && !killed {
						killed = true
						return errKilled
					}
					return nil
				}}
				f := pushing(t, l, readers, chunkBytes)
				post, err := f.S.CreatePost(t.Context(), sample.Alice, store.NewPost{Title: "Now", Body: "b"})
				if err != nil {
					t.Fatal(err)
				}
				f.Drain() // killed, then retried by the stream
				if !killed {
					t.Fatal("never killed")
				}
				checkOnce(t, l, readers)
				again := live.NewProjection(live.NewPushes(f.S), l)
				live.SetChunkBytes(again, chunkBytes)
				if err := again.Apply(t.Context(), published(post)); err != nil {
					t.Fatal(err)
				}
				checkOnce(t, l, readers)
			})
		}
	}
}

// A reader who unfollows before their chunk is pushed does not receive the
// post; one who follows after their place was passed does not either (the
// feed's backfill brings it).
func TestFollowsAsThePushReadsThem(t *testing.T) {
	readers := followers(300)
	var f *streamtest.Projected
	l := &lambda{before: func(n int) error {
		if n == 2 {
			unfollow := types.WriteRequest{DeleteRequest: &types.DeleteRequest{
				Key: store.Key{PK: store.UserPK(readers[250]), SK: store.FollowsSK(sample.Alice)}.Attributes()}}
			if err := f.S.BatchWrite(context.Background(), "unfollow", []types.WriteRequest{unfollow}); err != nil {
				return err
			}
			return f.S.Load(context.Background(), store.Dataset{Follows: []store.Follow{
				{FollowerID: "0-late", FollowedID: sample.Alice, CreatedAt: "2024-05-02T00:00:00.000Z"}}})
		}
		return nil
	}}
	f = pushing(t, l, readers, 4_000)
	f.Must(f.S.CreatePost(t.Context(), sample.Alice, store.NewPost{Title: "Now", Body: "b"}))
	f.Drain()
	checkOnce(t, l, slices.Delete(slices.Clone(readers), 250, 251))
}

// Two projectors pushing the same post at once (a record retried while it
// is still being applied) push each reader once: the one that loses a
// chunk's condition fails, and the stream's retry goes on from the marker.
func TestTwoPushesAtOnce(t *testing.T) {
	readers := followers(300)
	l := &lambda{}
	f := pushing(t, l, readers, 4_000)
	post, err := f.S.CreatePost(t.Context(), sample.Bob, store.NewPost{Title: "Bob's", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	f.Must(nil, f.S.Load(t.Context(), store.Dataset{Follows: followsOf(sample.Bob, readers)}))
	apply := func(int) error {
		p := live.NewProjection(live.NewPushes(f.S), l)
		live.SetChunkBytes(p, 4_000)
		return p.Apply(t.Context(), published(post))
	}
	for range 5 {
		storetest.AtOnce(2, apply)
	}
	if err := apply(0); err != nil {
		t.Fatal(err)
	}
	checkOnce(t, l, readers)
}

func followsOf(author string, readers []string) []store.Follow {
	var out []store.Follow
	for _, r := range readers {
		out = append(out, store.Follow{FollowerID: r, FollowedID: author, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	return out
}

// published is the stream's record of post created published.
func published(p store.Post) events.DynamoDBEventRecord {
	r := record("INSERT", store.PostPK(p.ID), store.SKMetadata)
	r.Change.NewImage = map[string]events.DynamoDBAttributeValue{
		"authorId": events.NewStringAttribute(p.AuthorID), "status": events.NewStringAttribute(store.StatusPublished),
		store.AttrGSI1SK: events.NewStringAttribute(store.PublishedSK(p.ID))}
	return r
}
