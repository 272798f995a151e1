package trending_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/storetest"
)

// cut is a store.API that lets the first `after` writes (UpdateItem, the
// aggregator's only write) through and fails every later one: before it
// reaches DynamoDB, or, with landed, after (the write made, its answer
// lost). The aggregator's parts are written in parallel, so which of them
// land before a cut varies: every subset is a state a killed flush leaves.
type cut struct {
	store.API
	after  int
	landed bool

	mu     sync.Mutex
	writes int
}

var errKilled = errors.New("the aggregator was killed")

func (c *cut) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	c.mu.Lock()
	c.writes++
	n := c.writes
	c.mu.Unlock()
	if n <= c.after || c.after < 0 {
		return c.API.UpdateItem(ctx, in, opts...)
	}
	if c.landed {
		_, _ = c.API.UpdateItem(ctx, in, opts...)
	}
	return nil, errKilled
}

// record is a stream record of a like (or a comment) on post at t, made
// (INSERT) or removed (REMOVE), with the sequence number seq.
func record(seq int, kind, event, post string, t time.Time) events.DynamoDBEventRecord {
	sk, timeAttr := store.LikeSK(fmt.Sprintf("L%06d", seq)), "likedAt"
	if kind == "comment" {
		sk, timeAttr = store.CommentSK(fmt.Sprintf("C%06d", seq)), "createdAt"
	}
	image := map[string]events.DynamoDBAttributeValue{
		"postId": events.NewStringAttribute(post), timeAttr: events.NewStringAttribute(t.UTC().Format(time.RFC3339Nano)),
	}
	r := events.DynamoDBEventRecord{EventName: event, Change: events.DynamoDBStreamRecord{
		SequenceNumber: fmt.Sprint(seq),
		Keys:           map[string]events.DynamoDBAttributeValue{store.AttrPK: events.NewStringAttribute(store.PostPK(post)), store.AttrSK: events.NewStringAttribute(sk)},
	}}
	if event == "INSERT" {
		r.Change.NewImage = image
	} else {
		r.Change.OldImage = image
	}
	return r
}

// expected is the ranking of each window at now that the records count,
// as listed writes it.
func expected(records []events.DynamoDBEventRecord, now time.Time) map[trending.Window][]string {
	out := map[trending.Window][]string{}
	for window, w := range trending.Spans {
		oldest := now.Truncate(w.Length).Add(-time.Duration(w.Buckets-1) * w.Length)
		counts := map[string]trending.Count{}
		for _, r := range records {
			image, delta := r.Change.NewImage, 1
			if r.EventName == "REMOVE" {
				image, delta = r.Change.OldImage, -1
			}
			at := image["likedAt"]
			c := trending.Count{Likes: delta}
			if store.IsCommentSK(r.Change.Keys[store.AttrSK].String()) {
				at, c = image["createdAt"], trending.Count{Comments: delta}
			}
			made, _ := time.Parse(time.RFC3339Nano, at.String())
			post := image["postId"].String()
			if !made.Truncate(w.Length).Before(oldest) {
				n := counts[post]
				counts[post] = trending.Count{Likes: n.Likes + c.Likes, Comments: n.Comments + c.Comments}
			}
		}
		var ranked []string
		for post, c := range counts {
			if c.Score() > 0 {
				ranked = append(ranked, fmt.Sprintf("%s %d+%d", post, c.Likes, c.Comments))
			}
		}
		sort.Slice(ranked, func(i, j int) bool { return compareRanked(counts, ranked[i], ranked[j]) < 0 })
		out[window] = ranked
	}
	return out
}

// redo is one way a killed invocation is invoked again: by Lambda, with
// the state it had; or by a consumer started again from the shard's
// checkpoint, with no state and the window's records from its start.
type redo struct {
	name  string
	fresh bool
}

// redoRun is one run of a redone window: on table through api, its clock
// at now, its records on shard.
type redoRun struct {
	table string
	api   store.API
	now   time.Time
	shard string
	posts []string
}

// records are the run's: a window of ten records on five posts over three
// cells, a comment removed among them (held); two more of the window's
// time (later); and the next window's two (next).
func (r redoRun) records() (held, later, next []events.DynamoDBEventRecord) {
	at := func(min int) time.Time { return r.now.Add(-time.Duration(min) * time.Minute) }
	posts := r.posts
	held = []events.DynamoDBEventRecord{
		record(1, "like", "INSERT", posts[0], at(1)), record(2, "comment", "INSERT", posts[1], at(1)),
		record(3, "like", "INSERT", posts[2], at(7)), record(4, "like", "INSERT", posts[3], at(7)),
		record(5, "comment", "INSERT", posts[0], at(12)), record(6, "like", "INSERT", posts[4], at(12)),
		record(7, "comment", "REMOVE", posts[1], at(1)), record(8, "like", "INSERT", posts[1], at(1)),
		record(9, "comment", "INSERT", posts[2], at(1)), record(10, "like", "INSERT", posts[0], at(7)),
	}
	later = []events.DynamoDBEventRecord{record(11, "like", "INSERT", posts[0], at(1)), record(12, "comment", "INSERT", posts[3], at(12))}
	next = []events.DynamoDBEventRecord{record(13, "like", "INSERT", posts[4], at(0)), record(14, "like", "INSERT", posts[2], at(0))}
	return held, later, next
}

// store is a store of the run's table on the run's clock, through api.
func (r redoRun) store(api store.API) *store.Store {
	return storetest.New(api, r.table, store.WithClock(func() time.Time { return r.now }))
}

func (r redoRun) aggregator(api store.API, maxCells int) *trending.Aggregator {
	return trending.New(trending.NewBuckets(r.store(api)), slog.New(slog.NewTextHandler(io.Discard, nil)), trending.WithMaxCells(maxCells))
}

// cleanWrites is how many writes the window's final invocation makes
// unkilled.
func (r redoRun) cleanWrites(t *testing.T, maxCells int) int {
	held, _, _ := r.records()
	c := &cut{API: r.api, after: -1}
	agg := r.aggregator(c, maxCells)
	st := r.invoke(t, agg, nil, held[:4], false)
	before := c.writes
	r.invoke(t, agg, st, held[4:], true)
	return c.writes - before
}

func (r redoRun) killAndRedo(t *testing.T, maxCells int, k *cut, rd redo, more bool) {
	held, later, next := r.records()
	if !more {
		later = nil
	}
	st := r.invoke(t, r.aggregator(r.api, maxCells), nil, held[:4], false)
	k.API = r.api
	if _, err := r.aggregator(k, maxCells).Handle(t.Context(), r.window(st, held[4:], true)); err == nil && k.writes > k.after {
		t.Fatalf("the invocation killed after %d writes succeeded", k.after)
	}
	again := slices.Concat(held[4:], later)
	if rd.fresh {
		st, again = nil, slices.Concat(held, later)
	}
	r.invoke(t, r.aggregator(r.api, maxCells), st, again, true)
	r.invoke(t, r.aggregator(r.api, maxCells), nil, next, true) // the next window counts on
	want := expected(slices.Concat(held, later, next), r.now)
	for _, w := range []trending.Window{trending.Hour, trending.Day, trending.Week} {
		got, err := trending.NewBuckets(r.store(r.api), trending.WithKeep(0)).Ranking(t.Context(), w, trending.MaxPosts)
		if err != nil {
			t.Fatal(err)
		}
		listed := make([]string, len(got))
		for i, p := range got {
			listed[i] = fmt.Sprintf("%s %d+%d", p.Post.ID, p.Likes, p.Comments)
		}
		if !slices.Equal(listed, want[w]) {
			t.Errorf("%s:\n got %v\nwant %v", w, listed, want[w])
		}
	}
}

// window is an invocation of the run's shard's window with state st.
func (r redoRun) window(st map[string]string, recs []events.DynamoDBEventRecord, final bool) events.DynamoDBTimeWindowEvent {
	ev := events.DynamoDBTimeWindowEvent{DynamoDBEvent: events.DynamoDBEvent{Records: recs}}
	ev.ShardID, ev.State, ev.IsFinalInvokeForWindow = r.shard, st, final
	return ev
}

// invoke invokes agg and returns the state it answers with.
func (r redoRun) invoke(t *testing.T, agg *trending.Aggregator, st map[string]string, recs []events.DynamoDBEventRecord, final bool) map[string]string {
	t.Helper()
	out, err := agg.Handle(t.Context(), r.window(st, recs, final))
	if err != nil {
		t.Fatal(err)
	}
	return out.State
}
