package feed_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// filters are the projector's event source's filters with the feed wired
// in, as the stack orders them.
var filters = slices.Concat(feed.StreamFilters, projector.StreamFilters)

// feedTest is a table with its stream, and the projector with the feed's
// projection applying what drain reads of it.
type feedTest struct {
	t      *testing.T
	s      *store.Store
	poller *streams.Poller
	api    streams.API
	arn    string
	fn     streams.Function
	calls  *storetest.Recorder // what the projector asked of DynamoDB
	done   *streams.Checkpoints
}

func newFeedTest(t *testing.T, opts ...feed.Option) *feedTest {
	s, client := storetest.NewStreamStore(t, store.Dataset{Users: append(sample.Data().Users,
		store.User{ID: "u_dave", Handle: "dave", Name: "Dave", CreatedAt: "2024-05-01T00:00:00.000Z"})})
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	calls := storetest.NewRecorder(client)
	ps := store.New(calls, s.Table(), cursor.New(storetest.TokenKey))
	fn := lambda.NewHandler(projector.New(ps, slog.New(slog.NewJSONHandler(io.Discard, nil)), feed.NewProjection(ps, opts...)).Handle)
	api := ddblocal.StreamsClient(storetest.Endpoint(t))
	done := &streams.Checkpoints{}
	p := streams.New(api, arn, fn, streams.Config{BatchSize: 100, MaxRetries: 3, Bisect: true, Filter: streams.Matches(filters)}, done)
	return &feedTest{t: t, s: s, poller: p, api: api, arn: arn, fn: fn, calls: calls, done: done}
}

// The projector with the feed's projection asks DynamoDB for exactly what
// its role grants (projector.TableActions, feed.TableActions and
// IndexActions), over every kind of record it
// applies: posts published, drafts published, posts deleted, follows,
// unfollows, an author passing the threshold and posting after.
func TestTheProjectorDoesWhatItsRoleGrants(t *testing.T) {
	f := newFeedTest(t, feed.WithPullThreshold(2))
	ctx := t.Context()
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))
	gone, err := f.s.CreatePost(ctx, sample.Alice, "gone", "g", false)
	f.must(gone, err)
	draft, err := f.s.CreatePost(ctx, sample.Alice, "draft", "d", true)
	f.must(draft, err)
	f.must(f.s.PublishPost(ctx, sample.Alice, draft.ID))
	f.must(f.s.DeletePost(ctx, sample.Alice, gone.ID))
	f.must(f.s.Unfollow(ctx, sample.Carol, sample.Alice))
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))
	f.must(f.s.Follow(ctx, sample.Bob, sample.Alice)) // past the threshold
	f.drain()
	f.must(f.s.CreatePost(ctx, sample.Alice, "after", "a", false))
	f.drain()
	f.want(sample.Carol, "after", "draft")

	var want []string
	for _, a := range slices.Concat(projector.TableActions, feed.TableActions) {
		if !slices.Contains(want, "table "+a) {
			want = append(want, "table "+a)
		}
	}
	for _, a := range feed.IndexActions {
		want = append(want, "index "+a)
	}
	slices.Sort(want)
	if got := f.calls.Actions(); !slices.Equal(got, want) {
		t.Errorf("the projector asked for %q; its role grants %q", got, want)
	}
}

// drain applies everything written so far.
func (f *feedTest) drain() {
	f.t.Helper()
	if _, err := f.poller.Poll(f.t.Context()); err != nil {
		f.t.Fatal(err)
	}
}

// feed returns the titles of the reader's whole feed, page after page.
func (f *feedTest) feed(reader string) []string {
	f.t.Helper()
	var titles []string
	req := store.PageRequest{Limit: 2}
	for {
		page, err := feed.NewTable(f.s).Feed(f.t.Context(), reader, req)
		if err != nil {
			f.t.Fatal(err)
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

func (f *feedTest) must(_ any, err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func (f *feedTest) want(reader string, titles ...string) {
	f.t.Helper()
	if got := f.feed(reader); !slices.Equal(got, titles) {
		f.t.Errorf("%s's feed: %q, want %q", reader, got, titles)
	}
}

// The feed follows the table: published posts of the followed, newest
// first by publication; a draft once published; a deleted post and an
// unfollowed author gone at once, before the projector has caught up; a new
// follow brings the followed user's latest posts.
func TestTheFeedFollowsTheTable(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))
	f.must(f.s.Follow(ctx, sample.Carol, sample.Bob))
	f.drain()
	f.must(f.s.CreatePost(ctx, sample.Alice, "alice 1", "a", false))
	draft, err := f.s.CreatePost(ctx, sample.Bob, "bob's draft", "b", true)
	if err != nil {
		t.Fatal(err)
	}
	f.must(f.s.CreatePost(ctx, sample.Alice, "alice 2", "a", false))
	f.drain()
	f.want(sample.Carol, "alice 2", "alice 1")
	f.must(f.s.PublishPost(ctx, sample.Bob, draft.ID))
	f.drain()
	f.want(sample.Carol, "bob's draft", "alice 2", "alice 1")
	f.want(sample.Alice) // she follows nobody
	f.must(f.s.DeletePost(ctx, sample.Bob, draft.ID))
	f.want(sample.Carol, "alice 2", "alice 1") // at once
	f.must(f.s.Unfollow(ctx, sample.Carol, sample.Alice))
	f.want(sample.Carol) // at once
	f.drain()
	f.want(sample.Carol)
	if n := entries(t, f, sample.Carol); n != 0 {
		t.Errorf("%d entries left in carol's feed", n)
	}
	f.must(f.s.Follow(ctx, "u_dave", sample.Alice))
	f.drain()
	f.want("u_dave", "alice 2", "alice 1")

	// The whole stream applied again (a redelivery, a new poller without
	// checkpoints) brings nothing back and writes nothing new.
	before := map[string]int{sample.Carol: entries(t, f, sample.Carol), "u_dave": entries(t, f, "u_dave"), sample.Alice: entries(t, f, sample.Alice)}
	f.poller = streams.New(f.api, f.arn, f.fn, streams.Config{BatchSize: 7, Filter: streams.Matches(filters)}, &streams.Checkpoints{})
	f.drain()
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
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))
	gone, err := f.s.CreatePost(ctx, sample.Alice, "gone", "g", false)
	f.must(gone, err)
	f.must(f.s.CreatePost(ctx, sample.Alice, "kept", "k", false))
	f.drain()
	f.must(f.s.DeletePost(ctx, sample.Alice, gone.ID))
	f.must(f.s.Unfollow(ctx, sample.Carol, sample.Alice))
	// One record an invocation: once the deletion is applied (to nobody:
	// carol follows no more), carol follows again, before her unfollow is read.
	fn := &between{Function: f.fn, mark: gone.ID, then: func() { f.must(f.s.Follow(ctx, sample.Carol, sample.Alice)) }}
	f.poller = streams.New(f.api, f.arn, fn, streams.Config{BatchSize: 1, Filter: streams.Matches(filters)}, f.done)
	f.drain()
	if fn.then != nil {
		t.Fatal("the deletion's record was never delivered")
	}
	f.drain()
	if got := feedEntries(t, f, sample.Carol); len(got) != 1 {
		t.Errorf("carol's feed holds %d entries, want 1 (the kept post's)", len(got))
	}
	f.want(sample.Carol, "kept")
}

func entries(t *testing.T, f *feedTest, reader string) int {
	return storetest.Count(t, storetest.Client(t), f.s.Table(), "", "pk", feed.PK(reader), "sk", "")
}

// Comments, likes and counts never invoke the projector: for a mixed
// workload, it is sent the posts' own records and the follows' only.
func TestOnlyPostsAndFollowsReachTheProjector(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	f.drain()
	start := f.poller.Delivered
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))             // 1 follow (and 2 counters)
	post, err := f.s.CreatePost(ctx, sample.Alice, "p", "b", false) // 1 post (its counter, the author's)
	if err != nil {
		t.Fatal(err)
	}
	for range 10 {
		f.must(f.s.CreateComment(ctx, sample.Bob, post.ID, "c")) // 10 comments (and 10 counter updates)
	}
	f.must(f.s.LikePost(ctx, sample.Bob, post.ID, nil)) // a like, its guard, the counter
	read, err := f.poller.Poll(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.poller.Delivered - start; got != 2 {
		t.Errorf("%d records delivered of %d written; want 2 (the follow, the post)", got, read)
	}
	t.Logf("%d records in the stream, %d delivered", read, f.poller.Delivered-start)
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
	go func() { f.poller.Run(running, 5*time.Millisecond); close(done) }()
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
					_, err = f.s.Follow(ctx, me, other)
				case op < 5 && other != me:
					_, err = f.s.Unfollow(ctx, me, other)
				case op < 7:
					var p store.Post
					p, err = f.s.CreatePost(ctx, me, fmt.Sprint(me, " ", r.Uint32()), "b", op == 6)
					mine = append(mine, p.ID)
				case op < 8 && len(mine) > 0:
					_, err = f.s.PublishPost(ctx, me, mine[r.IntN(len(mine))])
				case op < 10 && len(mine) > 0:
					_, err = f.s.DeletePost(ctx, me, mine[r.IntN(len(mine))])
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
	f.drain()
	for _, reader := range users {
		var want []string
		following, err := f.s.Following(ctx, reader, store.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		type placed struct{ place, title string }
		var posts []placed
		for _, fl := range following.Items {
			page, err := f.s.PostsByAuthor(ctx, fl.FollowedID, false, store.PageRequest{Limit: 100})
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
	out, err := storetest.Client(t).Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String(f.s.Table()), ConsistentRead: aws.Bool(true),
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
	f.must(f.s.Follow(ctx, sample.Carol, sample.Alice))
	before, err := f.s.CreatePost(ctx, sample.Alice, "before", "b", false)
	f.must(before, err)
	draft, err := f.s.CreatePost(ctx, sample.Alice, "draft", "d", true)
	f.must(draft, err)
	f.drain()
	f.must(f.s.Follow(ctx, sample.Bob, sample.Alice)) // the second follower: past the threshold
	f.drain()
	after, err := f.s.CreatePost(ctx, sample.Alice, "after", "a", false)
	f.must(after, err)
	f.must(f.s.PublishPost(ctx, sample.Alice, draft.ID))
	f.drain()
	if n := entries(t, f, sample.Carol); n != 2 { // "before", and alice's marker
		t.Errorf("carol's feed holds %d items; want the entry from before and the marker", n)
	}
	f.want(sample.Carol, "draft", "after", "before")
	f.want(sample.Bob, "draft", "after", "before")
	// The counts of a page: the author's counters are on GSI1 (those of its
	// posts from before the mark, and of those published since), read in
	// the page's second round trip.
	for i, id := range []string{before.ID, after.ID, after.ID, draft.ID, draft.ID, draft.ID} {
		f.must(f.s.CreateComment(ctx, []string{sample.Alice, sample.Bob, sample.Carol}[i%3], id, "c"))
	}
	counts := func(reader string) {
		t.Helper()
		mctx, m := cost.WithMeter(ctx)
		page, err := feed.NewTable(f.s).Feed(mctx, reader, store.PageRequest{Limit: 10, Attributes: []string{"title", "commentCount"}})
		f.must(page, err)
		got := map[string]int{}
		for _, p := range page.Items {
			got[p.Title] = p.CommentCount
		}
		if want := map[string]int{"before": 1, "after": 2, "draft": 3}; !maps.Equal(got, want) {
			t.Errorf("%s's feed counts %v, want %v", reader, got, want)
		}
		if rt := m.RoundTrips(); rt != 2 {
			t.Errorf("%s's feed page with counts: %d round trips, want 2", reader, rt)
		}
	}
	counts(sample.Carol)
	counts(sample.Bob)
	f.must(f.s.Follow(ctx, "u_dave", sample.Alice))
	f.drain()
	f.want("u_dave", "draft", "after", "before") // no entry: all three read at read time
	counts("u_dave")
	f.must(f.s.Unfollow(ctx, sample.Bob, sample.Alice))
	f.want(sample.Bob) // at once
	f.drain()
	if n := entries(t, f, sample.Bob); n != 0 {
		t.Errorf("%d items left in bob's feed after the unfollow", n)
	}
}
