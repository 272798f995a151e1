package feed_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
	"github.com/example/appsync-dynamo/local/streamtest"
)

// filters are the records the feed's projection is handed.
var filters = feed.StreamFilters

// feedTest is a table with its stream, and the projector with the feed's
// projection applying what Drain reads of it.
type feedTest struct{ *streamtest.Projected }

func newFeedTest(t *testing.T, opts ...feed.Option) *feedTest {
	return &feedTest{streamtest.NewProjected(t, filters, func(ps *store.Store) projector.Projection { return feed.NewProjection(ps, opts...) })}
}

// The projector with the feed's projection asks DynamoDB for exactly what
// its role grants for it (feed.TableActions and IndexActions), over every
// kind of record it applies: posts published, drafts published, posts deleted, follows,
// unfollows, an author passing the threshold and posting after.
func TestTheProjectorDoesWhatItsRoleGrants(t *testing.T) {
	f := newFeedTest(t, feed.WithPullThreshold(2))
	ctx := t.Context()
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))
	gone, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "gone", Body: "g"})
	f.Must(gone, err)
	draft, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "draft", Body: "d", Draft: true})
	f.Must(draft, err)
	f.Must(f.S.PublishPost(ctx, sample.Alice, draft.ID))
	f.Must(f.S.DeletePost(ctx, sample.Alice, gone.ID))
	f.Must(f.S.Unfollow(ctx, sample.Carol, sample.Alice))
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))
	f.Must(f.S.Follow(ctx, sample.Bob, sample.Alice)) // past the threshold
	f.Drain()
	f.Must(f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "after", Body: "a"}))
	f.Drain()
	f.want(sample.Carol, "after", "draft")

	var want []string
	for _, a := range feed.TableActions {
		if !slices.Contains(want, "table "+a) {
			want = append(want, "table "+a)
		}
	}
	for _, a := range feed.IndexActions {
		want = append(want, "index "+a)
	}
	slices.Sort(want)
	if got := f.Calls.Actions(); !slices.Equal(got, want) {
		t.Errorf("the projector asked for %q; its role grants %q", got, want)
	}
}

// feed returns the titles of the reader's whole feed, page after page.
func (f *feedTest) feed(reader string) []string {
	f.T.Helper()
	var titles []string
	req := store.PageRequest{Limit: 2}
	for {
		page, err := feed.NewTable(f.S).Feed(f.T.Context(), reader, req)
		if err != nil {
			f.T.Fatal(err)
		}
		for _, p := range page.Items {
			titles = append(titles, p.Title)
		}
		if page.NextToken == nil {
			return titles
		}
		req.NextToken = *page.NextToken
	}
}

func (f *feedTest) want(reader string, titles ...string) {
	f.T.Helper()
	if got := f.feed(reader); !slices.Equal(got, titles) {
		f.T.Errorf("%s's feed: %q, want %q", reader, got, titles)
	}
}

// The feed follows the table: published posts of the followed, newest
// first by publication; a draft once published; a deleted post and an
// unfollowed author gone at once, before the projector has caught up; a new
// follow brings the followed user's latest posts.
func TestTheFeedFollowsTheTable(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Bob))
	f.Drain()
	f.Must(f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "alice 1", Body: "a"}))
	draft, err := f.S.CreatePost(ctx, sample.Bob, store.NewPost{Title: "bob's draft", Body: "b", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	f.Must(f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "alice 2", Body: "a"}))
	f.Drain()
	f.want(sample.Carol, "alice 2", "alice 1")
	f.Must(f.S.PublishPost(ctx, sample.Bob, draft.ID))
	f.Drain()
	f.want(sample.Carol, "bob's draft", "alice 2", "alice 1")
	f.want(sample.Alice) // she follows nobody
	f.Must(f.S.DeletePost(ctx, sample.Bob, draft.ID))
	f.want(sample.Carol, "alice 2", "alice 1") // at once
	f.Must(f.S.Unfollow(ctx, sample.Carol, sample.Alice))
	f.want(sample.Carol) // at once
	f.Drain()
	f.want(sample.Carol)
	if n := entries(t, f, sample.Carol); n != 0 {
		t.Errorf("%d entries left in carol's feed", n)
	}
	f.Must(f.S.Follow(ctx, "u_dave", sample.Alice))
	f.Drain()
	f.want("u_dave", "alice 2", "alice 1")

	// The whole stream applied again (a redelivery, a new poller without
	// checkpoints) brings nothing back and writes nothing new.
	before := map[string]int{sample.Carol: entries(t, f, sample.Carol), "u_dave": entries(t, f, "u_dave"), sample.Alice: entries(t, f, sample.Alice)}
	f.Poller = streams.New(f.API, f.ARN, f.Fn, streams.Config{BatchSize: 7, Filter: streams.Matches(filters)}, &streams.Checkpoints{})
	f.Drain()
	for reader, n := range before {
		if got := entries(t, f, reader); got != n {
			t.Errorf("%s: %d entries after the stream was applied again, %d before", reader, got, n)
		}
	}
	f.want(sample.Carol)
	f.want("u_dave", "alice 2", "alice 1")
}

// between is a function that runs then once, after the first invocation
// whose event holds mark.
type between struct {
	streams.Function
	mark string
	then func()
}

func (b *between) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	out, err := b.Function.Invoke(ctx, payload)
	if b.then != nil && strings.Contains(string(payload), b.mark) {
		b.then()
		b.then = nil
	}
	return out, err
}

// A post deleted while a reader did not follow its author, the reader
// following again before the projector reads the unfollow: the deletion's
// fan-out missed the reader, and the unfollow, finding the reader a
// follower again, still takes the deleted post's entry out (and keeps the
// others).
func TestAnEntryOfAPostDeletedWhileUnfollowedGoes(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))
	gone, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "gone", Body: "g"})
	f.Must(gone, err)
	f.Must(f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "kept", Body: "k"}))
	f.Drain()
	f.Must(f.S.DeletePost(ctx, sample.Alice, gone.ID))
	f.Must(f.S.Unfollow(ctx, sample.Carol, sample.Alice))
	// One record an invocation: once the deletion is applied (to nobody:
	// carol follows no more), carol follows again, before her unfollow is read.
	fn := &between{Function: f.Fn, mark: gone.ID, then: func() { f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice)) }}
	f.Poller = streams.New(f.API, f.ARN, fn, streams.Config{BatchSize: 1, Filter: streams.Matches(filters)}, f.Done)
	f.Drain()
	if fn.then != nil {
		t.Fatal("the deletion's record was never delivered")
	}
	f.Drain()
	if got := feedEntries(t, f, sample.Carol); len(got) != 1 {
		t.Errorf("carol's feed holds %d entries, want 1 (the kept post's)", len(got))
	}
	f.want(sample.Carol, "kept")
}

func entries(t *testing.T, f *feedTest, reader string) int {
	return storetest.Count(t, storetest.Client(t), f.S.Table(), "", "pk", feed.PK(reader), "sk", "")
}

// Comments, likes and counts never invoke the projector: for a mixed
// workload, it is sent the posts' own records and the follows' only.
func TestOnlyPostsAndFollowsReachTheProjector(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	f.Drain()
	start := f.Poller.Delivered
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))                                  // 1 follow (and 2 counters)
	post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "p", Body: "b"}) // 1 post (its counter, the author's)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		f.Must(f.S.CreateComment(ctx, sample.Bob, post.ID, "c")) // 10 comments (and 10 counter updates)
	}
	f.Must(f.S.LikePost(ctx, sample.Bob, post.ID, nil)) // a like, its guard, the counter
	read, err := f.Poller.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Poller.Delivered - start; got != 2 {
		t.Errorf("%d records delivered of %d written; want 2 (the follow, the post)", got, read)
	}
	t.Logf("%d records in the stream, %d delivered", read, f.Poller.Delivered-start)
}

// After a concurrent mixed workload (posts, drafts published, deletes,
// follows and unfollows racing them, the projector running meanwhile) and
// the stream drained, every feed equals the published posts of the users
// its owner follows, newest first, each once, and the entries themselves
// hold nothing more (no entry of a deleted post or an unfollowed author
// left behind).
func TestFeedsConvergeToTheTable(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	users := []string{sample.Alice, sample.Bob, sample.Carol, "u_dave"}
	running, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { f.Poller.Run(running, 5*time.Millisecond); close(done) }()
	var wg sync.WaitGroup
	for w := range 8 {
		r := rand.New(rand.NewPCG(uint64(w), 9))
		wg.Go(func() {
			var mine []string
			me := users[w%len(users)]
			for range 40 {
				other := users[r.IntN(len(users))]
				var err error
				switch op := r.IntN(10); {
				case op < 3 && other != me:
					_, err = f.S.Follow(ctx, me, other)
				case op < 5 && other != me:
					_, err = f.S.Unfollow(ctx, me, other)
				case op < 7:
					var p store.Post
					p, err = f.S.CreatePost(ctx, me, store.NewPost{Title: fmt.Sprint(me, " ", r.Uint32()), Body: "b", Draft: op == 6})
					mine = append(mine, p.ID)
				case op < 8 && len(mine) > 0:
					_, err = f.S.PublishPost(ctx, me, mine[r.IntN(len(mine))])
				case op < 10 && len(mine) > 0:
					_, err = f.S.DeletePost(ctx, me, mine[r.IntN(len(mine))])
				}
				if err != nil && !errs.Is(err, errs.NotFound) && !errs.Is(err, errs.Conflict) {
					t.Errorf("%s: %v", me, err)
				}
			}
		})
	}
	wg.Wait()
	stop()
	<-done
	f.Drain()
	for _, reader := range users {
		var want []string
		following, err := f.S.Following(ctx, reader, store.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		type placed struct{ place, title string }
		var posts []placed
		for _, fl := range following.Items {
			page, err := f.S.PostsByAuthor(ctx, fl.FollowedID, false, store.PageRequest{Limit: 100})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range page.Items {
				posts = append(posts, placed{p.ID, p.Title}) // created here, so published at creation or later: ordered below by the feed's own key
			}
		}
		entries := feedEntries(t, f, reader)
		for _, p := range posts {
			want = append(want, p.title)
		}
		got := f.feed(reader)
		slices.Sort(want)
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		if !slices.Equal(sorted, want) {
			t.Errorf("%s's feed: %q, want %q", reader, got, want)
		}
		if len(entries) != len(want) {
			t.Errorf("%s: %d entries for %d posts", reader, len(entries), len(want))
		}
		if !slices.IsSortedFunc(entries, func(a, b string) int { return strings.Compare(b, a) }) {
			t.Errorf("%s's entries out of order", reader)
		}
	}
}

// feedEntries returns the sort keys of the reader's entries, as the feed
// reads them (newest first).
func feedEntries(t *testing.T, f *feedTest, reader string) []string {
	t.Helper()
	out, err := storetest.Client(t).Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String(f.S.Table()), ConsistentRead: aws.Bool(true),
		ScanIndexForward: aws.Bool(false), KeyConditionExpression: aws.String("pk = :r"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":r": &types.AttributeValueMemberS{Value: feed.PK(reader)}}})
	if err != nil {
		t.Fatal(err)
	}
	var sks []string
	for _, item := range out.Items {
		sks = append(sks, item["sk"].(*types.AttributeValueMemberS).Value)
	}
	return sks
}

// Past the threshold of followers an author's posts are no longer fanned
// out: the follow that crosses it marks the author and writes a marker in
// each follower's feed, later posts write no entry, and the feeds merge the
// author's posts at read time, with the entries from before, each once; an
// unfollow removes the marker, a new follower gets one.
func TestPastTheThresholdTheFeedsReadTheAuthor(t *testing.T) {
	f := newFeedTest(t, feed.WithPullThreshold(2))
	ctx := t.Context()
	f.Must(f.S.Follow(ctx, sample.Carol, sample.Alice))
	before, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "before", Body: "b"})
	f.Must(before, err)
	draft, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "draft", Body: "d", Draft: true})
	f.Must(draft, err)
	f.Drain()
	f.Must(f.S.Follow(ctx, sample.Bob, sample.Alice)) // the second follower: past the threshold
	f.Drain()
	after, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "after", Body: "a"})
	f.Must(after, err)
	f.Must(f.S.PublishPost(ctx, sample.Alice, draft.ID))
	f.Drain()
	if n := entries(t, f, sample.Carol); n != 2 { // "before", and alice's marker
		t.Errorf("carol's feed holds %d items; want the entry from before and the marker", n)
	}
	f.want(sample.Carol, "draft", "after", "before")
	f.want(sample.Bob, "draft", "after", "before")
	// The counts of a page: the author's counters are on GSI1 (those of its
	// posts from before the mark, and of those published since), read in
	// the page's second round trip.
	for i, id := range []string{before.ID, after.ID, after.ID, draft.ID, draft.ID, draft.ID} {
		f.Must(f.S.CreateComment(ctx, []string{sample.Alice, sample.Bob, sample.Carol}[i%3], id, "c"))
	}
	counts := func(reader string) {
		t.Helper()
		mctx, m := cost.WithMeter(ctx)
		page, err := feed.NewTable(f.S).Feed(mctx, reader, store.PageRequest{Limit: 10, Attributes: []string{"title", "commentCount"}})
		f.Must(page, err)
		got := map[string]int{}
		for _, p := range page.Items {
			got[p.Title] = p.CommentCount
		}
		if want := map[string]int{"before": 1, "after": 2, "draft": 3}; !maps.Equal(got, want) {
			t.Errorf("%s's feed counts %v, want %v", reader, got, want)
		}
		if rt := costdetail.RoundTrips(m.Calls()); rt != 2 {
			t.Errorf("%s's feed page with counts: %d round trips, want 2", reader, rt)
		}
	}
	counts(sample.Carol)
	counts(sample.Bob)
	f.Must(f.S.Follow(ctx, "u_dave", sample.Alice))
	f.Drain()
	f.want("u_dave", "draft", "after", "before") // no entry: all three read at read time
	counts("u_dave")
	f.Must(f.S.Unfollow(ctx, sample.Bob, sample.Alice))
	f.want(sample.Bob) // at once
	f.Drain()
	if n := entries(t, f, sample.Bob); n != 0 {
		t.Errorf("%d items left in bob's feed after the unfollow", n)
	}
}
