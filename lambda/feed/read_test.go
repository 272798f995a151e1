package feed_test

import (
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/storetest"
)

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
		if rt := costdetail.RoundTrips(m.Calls()); rt != wantTrips {
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
