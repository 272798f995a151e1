package trending_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// clock is a store's clock that a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// flaky fails one invocation in every, alternately before the aggregator
// runs (Lambda never reached it) and after (it wrote, its answer was lost:
// a killed aggregator).
type flaky struct {
	fn           lambda.Handler
	every, calls int
	failed       int
}

func (f *flaky) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	f.calls++
	if f.calls%f.every != 0 {
		return f.fn.Invoke(ctx, payload)
	}
	f.failed++
	if f.failed%2 == 0 {
		_, _ = f.fn.Invoke(ctx, payload)
	}
	return nil, errors.New("the aggregator was killed")
}

type trendTest struct {
	t      *testing.T
	s      *store.Store // the readers' store, on the moving clock
	client *dynamodb.Client
	arn    string
	clock  *clock
}

func newTrendTest(t *testing.T, data store.Dataset) *trendTest {
	c := &clock{t: time.Now().UTC()}
	s, client := storetest.NewStreamStore(t, data, append(slices.Clone(storetest.Wired), store.WithClock(c.now))...)
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	return &trendTest{t: t, s: s, client: client, arn: arn, clock: c}
}

// aggregate drains the stream through the aggregator (on a store of its
// own) as the event source mapping delivers it with a window of 200 ms,
// then closes the open windows.
func (tt *trendTest) aggregate(fn streams.Function, batch int, done *streams.Checkpoints) *streams.Poller {
	tt.t.Helper()
	p := streams.New(ddblocal.StreamsClient(storetest.Endpoint(tt.t)), tt.arn, fn, streams.Config{
		BatchSize: batch, MaxRetries: 10, Bisect: true, Filter: streams.Matches(trending.StreamFilters), Window: 200 * time.Millisecond,
		OnFailure: func(f streams.Failure) { tt.t.Errorf("given up on: %+v", f) },
	}, done)
	for range 2 {
		if _, err := p.Poll(tt.t.Context()); err != nil {
			tt.t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond) // every window ends
	}
	return p
}

func (tt *trendTest) aggregator(opts ...trending.Option) lambda.Handler {
	s := storetest.New(tt.client, tt.s.Table(), storetest.Wired...)
	return lambda.NewHandler(trending.New(trending.NewBuckets(s), slog.New(slog.NewJSONHandler(io.Discard, nil)), opts...).Handle)
}

// recount is each window's ranking as the table's own likes and comments
// say, at the clock's now: published posts with a positive score.
func (tt *trendTest) recount(window trending.Window) []string {
	tt.t.Helper()
	w := trending.Spans[window]
	oldest := tt.clock.now().Truncate(w.Length).Add(-time.Duration(w.Buckets-1) * w.Length)
	counts := map[string]trending.Count{}
	in := &dynamodb.ScanInput{TableName: aws.String(tt.s.Table()), ConsistentRead: aws.Bool(true)}
	for {
		out, err := tt.client.Scan(tt.t.Context(), in)
		if err != nil {
			tt.t.Fatal(err)
		}
		for _, item := range out.Items {
			sk, post := str(item, store.AttrSK), str(item, "postId")
			at, c := str(item, "likedAt"), trending.Count{Likes: 1}
			if store.IsCommentSK(sk) {
				at, c = str(item, "createdAt"), trending.Count{Comments: 1}
			} else if !store.IsLikeSK(sk) {
				continue
			}
			made, err := time.Parse(time.RFC3339Nano, at)
			if err != nil {
				tt.t.Fatalf("%s %s: %v", post, sk, err)
			}
			if trending.CellOf(post, made).Start.Before(oldest) {
				continue
			}
			n := counts[post]
			counts[post] = trending.Count{Likes: n.Likes + c.Likes, Comments: n.Comments + c.Comments}
		}
		if len(out.LastEvaluatedKey) == 0 {
			break
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
	var ranked []string
	for post, c := range counts {
		if p, err := tt.s.Post(tt.t.Context(), post); err == nil && p.Published() && c.Score() > 0 {
			ranked = append(ranked, fmt.Sprintf("%s %d+%d", post, c.Likes, c.Comments))
		}
	}
	slices.SortFunc(ranked, func(a, b string) int { return compareRanked(counts, a, b) })
	return ranked
}

func compareRanked(counts map[string]trending.Count, a, b string) int {
	idA, _, _ := strings.Cut(a, " ")
	idB, _, _ := strings.Cut(b, " ")
	if d := counts[idB].Score() - counts[idA].Score(); d != 0 {
		return d
	}
	return strings.Compare(idB, idA)
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

// listed is Trending's ranking as recount writes it.
func (tt *trendTest) listed(window trending.Window) []string {
	tt.t.Helper()
	got, err := trending.NewBuckets(tt.s, trending.WithKeep(0)).Ranking(tt.t.Context(), window, trending.MaxPosts)
	if err != nil {
		tt.t.Fatal(err)
	}
	out := make([]string, len(got))
	for i, p := range got {
		out[i] = fmt.Sprintf("%s %d+%d", p.Post.ID, p.Likes, p.Comments)
	}
	return out
}

func (tt *trendTest) check(when string) {
	tt.t.Helper()
	for _, w := range []trending.Window{trending.Hour, trending.Day, trending.Week} {
		want, got := tt.recount(w), tt.listed(w)
		if !slices.Equal(got, want) {
			tt.t.Errorf("%s, %s:\n got %v\nwant %v", when, w, got, want)
		}
	}
}

// storm writes likes, unlikes, comments and deletions by many users on
// many posts, one of them hot, over a week of the clock; it deletes a post
// with its likes and comments halfway (the last, unless deleted before).
func storm(t *testing.T, tt *trendTest, posts []string, users []string, steps int, seed uint64) {
	ctx := t.Context()
	rng := rand.New(rand.NewPCG(seed, 1))
	if err := storetest.MakeHot(ctx, tt.s, posts[0]); err != nil {
		t.Fatal(err)
	}
	var comments []store.Comment
	for i := range steps {
		tt.clock.advance(time.Duration(rng.IntN(50)) * time.Minute)
		user, post := users[rng.IntN(len(users))], posts[rng.IntN(len(posts))]
		switch rng.IntN(5) {
		case 0, 1:
			_, _ = tt.s.LikePost(ctx, user, post, nil) // already liked, or the post is gone: nothing
		case 2:
			_, _ = tt.s.UnlikePost(ctx, user, post, nil)
		case 3:
			if c, err := tt.s.CreateComment(ctx, user, post, fmt.Sprintf("comment %d 🚀", i)); err == nil {
				comments = append(comments, c)
			}
		case 4:
			if len(comments) > 0 {
				c := comments[rng.IntN(len(comments))]
				_, _ = tt.s.DeleteComment(ctx, c.AuthorID, c.PostID, c.ID)
			}
		}
		if i == steps/2 {
			gone := posts[len(posts)-1]
			p, err := tt.s.Post(ctx, gone)
			if errs.KindOf(err) == errs.NotFound { // deleted by an earlier storm
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tt.s.DeletePost(ctx, p.AuthorID, gone); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func stormData(nUsers, nPosts int) (store.Dataset, []string, []string) {
	d := sample.Data()
	var users, posts []string
	for i := range nUsers {
		id := fmt.Sprintf("u_reader%02d", i)
		users = append(users, id)
		d.Users = append(d.Users, store.User{ID: id, Handle: fmt.Sprintf("reader%02d", i), Name: id, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	for i := range nPosts {
		id := fmt.Sprintf("01J%023d", i)
		posts = append(posts, id)
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: sample.Alice, Title: id, Body: "b",
			CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z"})
	}
	for i := range d.Users {
		if d.Users[i].ID == sample.Alice {
			d.Users[i].PostCount += nPosts
		}
	}
	return d, users, posts
}

func TestTrendingIsTheTablesCountUnderFailuresAndReplays(t *testing.T) {
	data, users, posts := stormData(12, 8)
	tt := newTrendTest(t, data)
	storm(t, tt, posts, users, 300, 7)

	fn := &flaky{fn: tt.aggregator(trending.WithMaxCells(5)), every: 4}
	p := tt.aggregate(fn, 7, &streams.Checkpoints{})
	if fn.failed == 0 || p.Invocations < 20 {
		t.Fatalf("%d invocations, %d failed: the test needs many and some failed", p.Invocations, fn.failed)
	}
	tt.check("after the stream with failures")

	// Every record again, in other batches and flushes: the shard's
	// progress keeps each from counting twice.
	tt.aggregate(tt.aggregator(trending.WithMaxCells(3)), 100, &streams.Checkpoints{})
	tt.check("after the stream was delivered again")

	// Time passes: likes leave the hour, then the day.
	tt.clock.advance(50 * time.Minute)
	tt.check("50 minutes later")
	tt.clock.advance(23 * time.Hour)
	tt.check("a day later")
	t.Logf("%d invocations (%d failed), %d records delivered", p.Invocations, fn.failed, p.Delivered)
}

// An early end of a window (isWindowTerminatedEarly) flushes the state it
// carries, and a window begun since counts on from there.
func TestAWindowEndedEarlyIsFlushed(t *testing.T) {
	data, users, posts := stormData(3, 2)
	tt := newTrendTest(t, data)
	for _, u := range users {
		if _, err := tt.s.LikePost(t.Context(), u, posts[0], nil); err != nil {
			t.Fatal(err)
		}
	}
	all := tt.records()
	recs := all[len(all)-len(users):] // the sample's own likes and comments come first
	agg := trending.New(trending.NewBuckets(storetest.New(tt.client, tt.s.Table(), storetest.Wired...)), slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ev := events.DynamoDBTimeWindowEvent{DynamoDBEvent: events.DynamoDBEvent{Records: recs[:2]}}
	ev.ShardID = "shard-1"
	out, err := agg.Handle(t.Context(), ev)
	if err != nil {
		t.Fatal(err)
	}
	ev.State, ev.Records, ev.IsWindowTerminatedEarly, ev.IsFinalInvokeForWindow = out.State, nil, true, true
	if out, err = agg.Handle(t.Context(), ev); err != nil || len(out.State) != 0 {
		t.Fatalf("the early end: %v, state %v", err, out.State)
	}
	if got := tt.listed(trending.Hour); !slices.Equal(got, []string{posts[0] + " 2+0"}) {
		t.Errorf("after the early end: %v, want the first two likes", got)
	}
	// The window goes on with a fresh state: the stream from its start, the
	// first two likes counted already.
	ev = events.DynamoDBTimeWindowEvent{DynamoDBEvent: events.DynamoDBEvent{Records: all}}
	ev.ShardID, ev.IsFinalInvokeForWindow = "shard-1", true
	if _, err := agg.Handle(t.Context(), ev); err != nil {
		t.Fatal(err)
	}
	tt.check("after the window's end")
}

// records returns the stream's records the aggregator's filter keeps.
func (tt *trendTest) records() []events.DynamoDBEventRecord {
	tt.t.Helper()
	var got []events.DynamoDBEventRecord
	fn := lambda.NewHandler(func(ev events.DynamoDBEvent) error {
		got = append(got, ev.Records...)
		return nil
	})
	p := streams.New(ddblocal.StreamsClient(storetest.Endpoint(tt.t)), tt.arn, fn, streams.Config{BatchSize: 1000, Filter: streams.Matches(trending.StreamFilters)}, &streams.Checkpoints{})
	if _, err := p.Poll(tt.t.Context()); err != nil {
		tt.t.Fatal(err)
	}
	return got
}

// killer is the aggregator's function, as a process that dies: in the
// window's final invocation it is killed after `after` of its writes (each
// landed or not), and, with consumerDies, its whole consumer with it (the
// poller stops where it is; another one starts from the checkpoints), or
// else only the invocation (Lambda invokes it again with the same state).
type killer struct {
	tt           *trendTest
	maxCells     int
	after        int
	landed       bool
	consumerDies bool
	kill         context.CancelFunc
	killed       bool
}

func (k *killer) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	if k.killed || !strings.Contains(string(payload), `"isFinalInvokeForWindow":true`) {
		return k.tt.aggregator(trending.WithMaxCells(k.maxCells)).Invoke(ctx, payload)
	}
	k.killed = true
	c := &cut{API: k.tt.client, after: k.after, landed: k.landed}
	s := storetest.New(c, k.tt.s.Table(), storetest.Wired...)
	_, _ = lambda.NewHandler(trending.New(trending.NewBuckets(s), slog.New(slog.DiscardHandler), trending.WithMaxCells(k.maxCells)).Handle).Invoke(ctx, payload)
	if k.consumerDies {
		k.kill()
	}
	return nil, errKilled
}

// The stream's windows, their final invocations killed within their
// flushes (after 1 to 9 writes, landed or not), by Lambda invoking the
// window again with its state or by a consumer started again from its
// checkpoints while more likes and comments of the window's time arrive,
// leave every window's ranking as the table's own likes and comments
// count it.
func TestTrendingIsTheTablesCountAfterKillsWithinFlushes(t *testing.T) {
	data, users, posts := stormData(12, 7)
	tt := newTrendTest(t, data)
	cp := &streams.Checkpoints{}
	kills := 0
	for round := range 6 {
		storm(t, tt, posts, users, 40, uint64(round))
		ctx, kill := context.WithCancel(t.Context())
		k := &killer{tt: tt, maxCells: 4, after: 1 + round*round%9, landed: round%2 == 0, consumerDies: round%3 != 2, kill: kill}
		p := streams.New(ddblocal.StreamsClient(storetest.Endpoint(t)), tt.arn, k, streams.Config{
			BatchSize: 9, MaxRetries: 10, Filter: streams.Matches(trending.StreamFilters), Window: time.Hour,
			OnFailure: func(f streams.Failure) { t.Errorf("given up on: %+v", f) },
		}, cp)
		// A window also ends within the poll when the storm's records cross
		// the hour (windows are of the records' times): the consumer may die
		// there, its context canceled.
		_, err := p.Poll(ctx)
		switch {
		case err == nil:
			err = p.CloseWindows(ctx)
		case !k.killed || !k.consumerDies || !errors.Is(err, context.Canceled):
			t.Fatal(err)
		}
		if k.consumerDies != (err != nil) {
			t.Fatalf("round %d: the consumer died: %v, its windows closed: %v", round, k.consumerDies, err)
		}
		if k.killed {
			kills++
		}
		kill()
	}
	if kills < 6 {
		t.Fatalf("%d of 6 rounds killed a final invocation", kills)
	}
	p := tt.aggregate(tt.aggregator(trending.WithMaxCells(4)), 9, cp)
	if err := p.CloseWindows(t.Context()); err != nil {
		t.Fatal(err)
	}
	tt.check("after six kills within flushes")
}
