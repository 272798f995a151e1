package feed_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/storetest"
)

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
		if rt := m.RoundTrips(); rt > 2 {
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

func firstDiff(a, b []string) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// A page mixing fanned-out entries and a high-follower author's posts, with
// counts selected: each post's counts are its own (read once, never added
// twice), in at most 2 round trips once the projector has put the author's
// counters on GSI1 (IndexCounters), and in 3 before.
func TestAMixedFeedPageCountsEachPostOnce(t *testing.T) {
	const reader, fan, star = "u_reader", "u_fan", "u_star"
	s, _ := storetest.NewStore(t, store.Dataset{Users: []store.User{
		{ID: reader, Handle: "reader", Name: "R", CreatedAt: "2026-01-01T00:00:00.000Z"},
		{ID: fan, Handle: "fanned", Name: "F", CreatedAt: "2026-01-01T00:00:00.000Z"},
		{ID: star, Handle: "star", Name: "S", CreatedAt: "2026-01-01T00:00:00.000Z"},
	}})
	ctx := t.Context()
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Follow(ctx, reader, fan))
	must(s.Follow(ctx, reader, star))
	fanned, err := s.CreatePost(ctx, fan, store.NewPost{Title: "fanned", Body: "b"})
	must(fanned, err)
	pulled, err := s.CreatePost(ctx, star, store.NewPost{Title: "pulled", Body: "b"})
	must(pulled, err)
	comments := map[string]int{fanned.ID: 3, pulled.ID: 2}
	for id, n := range comments {
		for range n {
			must(s.CreateComment(ctx, reader, id, "c"))
		}
	}
	must(s.LikePost(ctx, reader, pulled.ID, []string{"id"}))
	// The projector's writes: the fanned-out entry, the star's marker.
	if err := feed.NewTable(s).PutEntries(ctx, []feed.Entry{{Reader: reader, Place: store.PublishedSK(fanned.ID), PostID: fanned.ID, AuthorID: fan, Expires: time.Now().Add(time.Hour).Unix()}}); err != nil {
		t.Fatal(err)
	}
	if err := feed.NewTable(s).PutPullMarkers(ctx, star, []string{reader}); err != nil {
		t.Fatal(err)
	}
	read := func(wantTrips int) {
		t.Helper()
		mctx, m := cost.WithMeter(ctx)
		page, err := feed.NewTable(s).Feed(mctx, reader, store.PageRequest{Limit: 10, Attributes: []string{"id", "commentCount", "likeCount"}})
		if err != nil {
			t.Fatal(err)
		}
		if rt := m.RoundTrips(); rt != wantTrips {
			t.Errorf("%d round trips, want %d", rt, wantTrips)
		}
		if len(page.Items) != 2 {
			t.Fatalf("%d posts, want 2", len(page.Items))
		}
		for _, p := range page.Items {
			likes := 0
			if p.ID == pulled.ID {
				likes = 1
			}
			if p.CommentCount != comments[p.ID] || p.LikeCount != likes {
				t.Errorf("post %s: %d comments and %d likes, want %d and %d", p.ID, p.CommentCount, p.LikeCount, comments[p.ID], likes)
			}
		}
	}
	read(3) // the star's counters not on GSI1 yet: a third round trip reads them
	if err := feed.NewTable(s).IndexCounters(ctx, star, []feed.Entry{{Place: store.PublishedSK(pulled.ID), PostID: pulled.ID}}); err != nil {
		t.Fatal(err)
	}
	read(2)
}
