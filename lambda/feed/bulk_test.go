//go:build !race && !nobulk

// The tests of this file run the package's code at volume (thousands of
// generated queries, the largest payloads, every cut point of a redo, the
// capacity workloads). The race detector would cost them 4 to 10 times
// their time for code the package's other tests run under it, concurrently:
// make test runs them in a pass of their own, without it; the copies of the
// tree that local/removal and local/extending test, whose changes are to
// wiring and not to volume, leave them out (nobulk) (docs/local.md).

package feed_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// The projector killed at every cut point (before and after each of its
// writes: entries put and deleted, pull markers, counters indexed, the
// author's mark), its batch then sent again whole, with the records after
// it or without, leaves the feeds as an unkilled run does: each reader's
// entries of a fanned-out author's posts exactly those published and
// followed, a pull marker for each follower of a pulled author, and each
// feed as Feed reads it.
func TestAProjectionRedoneAtAnyCutPointIsExact(t *testing.T) {
	run := func(t *testing.T, k *cut, later bool) (feeds, int) {
		s, client := storetest.NewStreamStore(t, store.Dataset{Users: historyUsers})
		k.API = client
		newProjector := func() *projector.Projector { // a new process: nothing of the killed one's memory
			ps := storetest.New(k, s.Table())
			return projector.New(slog.New(slog.DiscardHandler), nil, feed.NewProjection(ps, feed.WithPullThreshold(pullAt)))
		}
		read := &streams.Checkpoints{}
		project := func() {
			recs, fn := projectorRecords(t, s, client, read), newProjector()
			const batch = 6
			for from := 0; from < len(recs); {
				part := recs[from:min(from+batch, len(recs))]
				out, err := fn.Handle(t.Context(), events.DynamoDBEvent{Records: part})
				if err == nil && len(out.BatchItemFailures) == 0 {
					from += len(part)
					continue
				}
				// Killed: the batch again whole, by itself or with the records after it.
				again := part
				if later {
					again = recs[from:min(from+2*batch, len(recs))]
				}
				fn = newProjector()
				if out, err := fn.Handle(t.Context(), events.DynamoDBEvent{Records: again}); err != nil || len(out.BatchItemFailures) > 0 {
					t.Fatalf("the batch again: %v %v", err, out.BatchItemFailures)
				}
				from += len(again)
			}
		}
		titles := feedHistory(t, s, project)
		project()
		return feedState(t, s, client, titles), k.writes
	}
	want, writes := run(t, &cut{}, false)
	if recount := recountFeeds(t); !want.agrees(recount) {
		t.Fatalf("the unkilled run:\n%s\nthe table's follows and posts say:\n%s", want, recount)
	}
	t.Logf("unkilled, %d writes:\n%s", writes, want)
	for at := 1; at <= writes; at++ {
		for _, landed := range []bool{false, true} {
			for _, later := range []bool{false, true} {
				t.Run(fmt.Sprintf("write %d of %d, landed %v, later records %v", at, writes, landed, later), func(t *testing.T) {
					k := &cut{at: at, landed: landed}
					if got, _ := run(t, k, later); got.String() != want.String() {
						t.Errorf("killed at write %d:\n%s\nwant\n%s", at, got, want)
					}
					if !k.hit {
						t.Errorf("write %d was never made", at)
					}
				})
			}
		}
	}
}

// A reader following 5,000 users (their posts fanned out into the reader's
// feed) and 20 high-follower authors (read at read time), one of them with
// 100,000 followers, all loaded directly: every page to the end is right,
// newest first, each post once with its own counts, in at most 2 round
// trips.
func TestAFeedWithHighFollowerAuthorsPagesToTheEnd(t *testing.T) {
	const reader = "u_reader"
	now := time.Now().Add(-time.Hour)
	d := store.Dataset{Users: []store.User{{ID: reader, Handle: "reader", Name: "R", CreatedAt: "2026-01-01T00:00:00.000Z"}}}
	var want []string // post IDs, newest first at the end
	counts := map[string][2]int{}
	stars := map[string][]feed.Entry{} // the stars' posts, as the projector indexes their counters
	post := func(author string, at time.Time) string {
		id, n := store.NewULID(at), len(d.Posts)
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: author, Title: "t", Body: "b", CreatedAt: at.Format(time.RFC3339), UpdatedAt: at.Format(time.RFC3339), Status: store.StatusPublished,
			CommentCount: n % 7, LikeCount: n % 5})
		counts[id] = [2]int{n % 7, n % 5}
		want = append(want, id)
		return id
	}
	for i := range 5000 {
		a := fmt.Sprintf("u_%04d", i)
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: a})
		at := now.Add(time.Duration(i) * 500 * time.Millisecond)
		id := post(a, at)
		d.Items = append(d.Items, feed.Entry{Reader: reader, Place: store.PublishedSK(id), PostID: id, AuthorID: a, Expires: at.Add(feed.TTL).Unix()}.Item())
	}
	for i := range 20 {
		a := fmt.Sprintf("u_star%02d", i)
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: a})
		for p := range 5 {
			id := post(a, now.Add(time.Duration(p*977+i*113)*time.Second))
			stars[a] = append(stars[a], feed.Entry{Place: store.PublishedSK(id), PostID: id})
		}
		d.Items = append(d.Items, feed.Entry{Reader: reader, Place: feed.PullSK(a), AuthorID: a}.Item()) // the marker, as the projector writes it
	}
	for i := range 99999 { // the first star's other followers
		d.Follows = append(d.Follows, store.Follow{FollowerID: fmt.Sprintf("u_fan%05d", i), FollowedID: "u_star00"})
	}
	s, _ := storetest.NewStore(t, store.Dataset{})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if err := s.Load(ctx, d); err != nil {
		t.Fatal(err)
	}
	for a, posts := range stars {
		if err := feed.NewTable(s).IndexCounters(ctx, a, posts); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	slices.Reverse(want)

	var got []string
	req := store.PageRequest{Limit: 100, Attributes: []string{"id", "title", "commentCount", "likeCount"}}
	for pages := 0; ; pages++ {
		mctx, m := cost.WithMeter(ctx)
		page, err := feed.NewTable(s).Feed(mctx, reader, req)
		if err != nil {
			t.Fatal(err)
		}
		if rt := costdetail.RoundTrips(m.Calls()); rt > 2 {
			t.Fatalf("page %d: %d round trips", pages, rt)
		}
		for _, p := range page.Items {
			got = append(got, p.ID)
			if c := [2]int{p.CommentCount, p.LikeCount}; c != counts[p.ID] {
				t.Fatalf("post %s counts %v, want %v", p.ID, c, counts[p.ID])
			}
		}
		if page.NextToken == nil {
			t.Logf("%d posts in %d pages", len(got), pages+1)
			break
		}
		req.NextToken = *page.NextToken
	}
	if !slices.Equal(got, want) {
		t.Errorf("%d posts read, want %d (first difference at %d)", len(got), len(want), firstDiff(got, want))
	}
}
