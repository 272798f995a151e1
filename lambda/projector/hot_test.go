package projector_test

import (
	"fmt"
	"maps"
	"slices"
	"sync"
	"testing"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// A hot post's likes: liked before it turned hot and after, by 60 users at
// once, some unliked (before and after), the stream read by the projector
// and read again from the start: its likeCount equals its likes, its
// likes page to the end newest first with every like once, likedByMe is
// exact for each user, and deleting it leaves nothing behind and takes no
// like.
func TestAHotPostsLikesCountAndListExactly(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	var users []store.User
	for i := range 60 {
		users = append(users, store.User{ID: fmt.Sprintf("u_fan%02d", i), Handle: fmt.Sprintf("fan%02d", i), Name: "Fan", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	if err := f.s.Load(ctx, store.Dataset{Users: users}); err != nil {
		t.Fatal(err)
	}
	post, err := f.s.CreatePost(ctx, sample.Alice, "hot", "h", false)
	f.must(post, err)
	likers := map[string]bool{}
	like := func(u string) {
		if _, err := f.s.LikePost(ctx, u, post.ID, []string{"id", "likeCount"}); err != nil {
			t.Error(err)
		}
	}
	unlike := func(u string) {
		if _, err := f.s.UnlikePost(ctx, u, post.ID, []string{"id", "likeCount"}); err != nil {
			t.Error(err)
		}
	}
	for _, u := range users[:10] { // before: in the post's own partition
		like(u.ID)
		likers[u.ID] = true
	}
	unlike(users[0].ID)
	delete(likers, users[0].ID)
	f.must(nil, f.s.MakeHot(ctx, post.ID))
	f.must(nil, f.s.MakeHot(ctx, post.ID)) // once hot, it changes nothing

	// A second store, as another Lambda instance, that does not know the
	// post is hot: its likes find out from the failed condition.
	other, _ := storetest.StoreOn(t, f.s.Table())
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, u := range users[10:] {
		wg.Go(func() {
			s := f.s
			if i%3 == 0 {
				s = other
			}
			if _, err := s.LikePost(ctx, u.ID, post.ID, []string{"id", "likeCount"}); err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			likers[u.ID] = true
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, u := range []string{users[1].ID, users[20].ID, users[33].ID} { // one from before, two in shards
		unlike(u)
		delete(likers, u)
	}
	like(users[20].ID) // liked again, into a shard
	likers[users[20].ID] = true
	f.drain()

	check := func(when string) {
		t.Helper()
		p, err := f.s.Post(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.LikeCount != len(likers) {
			t.Errorf("%s: likeCount %d, want %d", when, p.LikeCount, len(likers))
		}
		var listed []string
		var sks []string
		req := store.PageRequest{Limit: 7}
		for pages := 0; pages < 50; pages++ {
			page, err := f.s.Likes(ctx, post.ID, req)
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range page.Items {
				listed = append(listed, l.UserID)
				sks = append(sks, l.ID)
			}
			if page.NextToken == nil {
				break
			}
			req.NextToken = *page.NextToken
		}
		if got, want := slices.Sorted(slices.Values(listed)), slices.Sorted(maps.Keys(likers)); !slices.Equal(got, want) {
			t.Errorf("%s: listed %d likes %v, want %d %v", when, len(got), got, len(want), want)
		}
		if !slices.IsSortedFunc(sks, func(a, b string) int { return -compare(a, b) }) {
			t.Errorf("%s: likes not newest first", when)
		}
		// The largest page the API takes holds them all, and says so.
		whole, err := f.s.Likes(ctx, post.ID, store.PageRequest{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Items) != len(likers) || whole.NextToken != nil {
			t.Errorf("%s: a page of %d holds %d likes (nextToken %v), want %d and none", when, store.MaxLimit, len(whole.Items), whole.NextToken != nil, len(likers))
		}
		ids := []string{post.ID}
		for _, u := range users {
			liked, err := other.LikedBy(ctx, u.ID, ids)
			if err != nil {
				t.Fatal(err)
			}
			if liked[post.ID] != likers[u.ID] {
				t.Errorf("%s: %s likedByMe %v, want %v", when, u.ID, liked[post.ID], likers[u.ID])
			}
		}
	}
	check("drained")

	// The whole stream again, as redelivered: nothing counts twice.
	f.poller = streams.New(f.api, f.arn, f.fn, streams.Config{BatchSize: 7, Filter: streams.Matches(store.FeedStreamFilters)}, &streams.Checkpoints{})
	f.drain()
	check("read again")
	// An older tally (a record delivered after a newer one) changes nothing:
	// every shard's creation (version 0) was copied already.
	f.must(nil, f.s.ApplyTallies(ctx, post.ID, map[int]store.ShardTally{0: {Likes: 1000, Version: 0}, 1: {Likes: 1000, Version: 0}}))
	check("an older tally applied")

	if _, err := f.s.DeletePost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	left := storetest.Count(t, storetest.Client(t), f.s.Table(), "", "pk", store.PostPK(post.ID), "sk", "")
	for n := range store.HotShards {
		left += storetest.Count(t, storetest.Client(t), f.s.Table(), "", "pk", store.ShardPK(post.ID, n), "sk", "")
	}
	if left != 0 {
		t.Errorf("%d items left of the deleted hot post", left)
	}
	if _, err := f.s.LikePost(ctx, users[5].ID, post.ID, nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("a like of the deleted hot post: %v, want NotFound", err)
	}
}

func compare(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// Throttled while it copies a hot post's counts, the projector reports the
// batch from that post's first record, the event source sends it again,
// and once the stream is drained the count equals the likes: 40 users like
// at once (their transactions conflicting on the shard counters they
// share, and retried), the projector's first three writes of counts fail.
func TestAHotPostsCountSurvivesAThrottledProjector(t *testing.T) {
	f := newFeedTest(t)
	ctx := t.Context()
	var users []store.User
	for i := range 40 {
		users = append(users, store.User{ID: fmt.Sprintf("u_fan%02d", i), Handle: fmt.Sprintf("fan%02d", i), Name: "Fan", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	if err := f.s.Load(ctx, store.Dataset{Users: users}); err != nil {
		t.Fatal(err)
	}
	post, err := f.s.CreatePost(ctx, sample.Alice, "hot", "h", false)
	f.must(post, err)
	f.must(nil, f.s.MakeHot(ctx, post.ID))
	f.drain()
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			if _, err := f.s.LikePost(ctx, u.ID, post.ID, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f.calls.mu.Lock()
	f.calls.failUpdates = 3 // fewer than the poller's retries (3) plus the first attempt
	f.calls.mu.Unlock()
	f.drain()
	f.calls.mu.Lock()
	left := f.calls.failUpdates
	f.calls.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d injected failures left: the projector wrote no counts", left)
	}
	p, err := f.s.Post(ctx, post.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.LikeCount != len(users) {
		t.Errorf("likeCount %d after the throttled projector, want %d", p.LikeCount, len(users))
	}
}
