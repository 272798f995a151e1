package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/storetest"
)

// A reader following 5,000 users (their posts fanned out into the reader's
// feed) and 20 high-follower authors (read at read time), one of them with
// 100,000 followers, all loaded directly: every page to the end is right,
// newest first, each post once, in at most 2 round trips.
func TestAFeedWithHighFollowerAuthorsPagesToTheEnd(t *testing.T) {
	const reader = "u_reader"
	now := time.Now().Add(-time.Hour)
	d := store.Dataset{Users: []store.User{{ID: reader, Handle: "reader", Name: "R", CreatedAt: "2026-01-01T00:00:00.000Z"}}}
	var want []string // post IDs, newest first at the end
	post := func(author string, at time.Time) string {
		id := store.NewULID(at)
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: author, Title: "t", Body: "b", CreatedAt: at.Format(time.RFC3339), UpdatedAt: at.Format(time.RFC3339), Status: store.StatusPublished})
		want = append(want, id)
		return id
	}
	for i := range 5000 {
		a := fmt.Sprintf("u_%04d", i)
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: a})
		at := now.Add(time.Duration(i) * 500 * time.Millisecond)
		id := post(a, at)
		d.Feed = append(d.Feed, store.FeedEntry{Reader: reader, Place: store.PublishedSK(id), PostID: id, AuthorID: a, Expires: at.Add(store.FeedTTL).Unix()})
	}
	for i := range 20 {
		a := fmt.Sprintf("u_star%02d", i)
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: a})
		for p := range 5 {
			post(a, now.Add(time.Duration(p*977+i*113)*time.Second))
		}
		d.Feed = append(d.Feed, store.FeedEntry{Reader: reader, Place: store.PullSK(a), AuthorID: a}) // the marker, as the projector writes it
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
	slices.Sort(want)
	slices.Reverse(want)

	var got []string
	req := store.PageRequest{Limit: 100, Attributes: []string{"id", "title"}}
	for pages := 0; ; pages++ {
		mctx, m := cost.WithMeter(ctx)
		page, err := s.Feed(mctx, reader, req)
		if err != nil {
			t.Fatal(err)
		}
		if rt := m.RoundTrips(); rt > 2 {
			t.Fatalf("page %d: %d round trips", pages, rt)
		}
		for _, p := range page.Items {
			got = append(got, p.ID)
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
