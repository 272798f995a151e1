package hotkeys_test

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
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
	f := newStreamTest(t)
	ctx := t.Context()
	users, post := f.fansOfAPost(60)
	likers := map[string]bool{}
	like := func(u string) {
		if _, err := f.S.LikePost(ctx, u, post.ID, []string{"id", "likeCount"}); err != nil {
			t.Error(err)
		}
	}
	unlike := func(u string) {
		if _, err := f.S.UnlikePost(ctx, u, post.ID, []string{"id", "likeCount"}); err != nil {
			t.Error(err)
		}
	}
	for _, u := range users[:10] { // before: in the post's own partition
		like(u.ID)
		likers[u.ID] = true
	}
	unlike(users[0].ID)
	delete(likers, users[0].ID)
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID)) // once hot, it changes nothing

	// A second store, as another Lambda instance, that does not know the
	// post is hot: its likes find out from the failed condition.
	other, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, u := range users[10:] {
		wg.Go(func() {
			s := f.S
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
	f.Drain()

	check := func(when string) {
		t.Helper()
		p, err := f.S.Post(ctx, post.ID)
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
			page, err := f.S.Likes(ctx, post.ID, req)
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
		whole, err := f.S.Likes(ctx, post.ID, store.PageRequest{Limit: store.MaxLimit})
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
	f.Poller = streams.New(f.API, f.ARN, f.Fn, streams.Config{BatchSize: 7, Filter: streams.Matches(hotkeys.StreamFilters)}, &streams.Checkpoints{})
	f.Drain()
	check("read again")
	// An older tally (a record delivered after a newer one) changes nothing:
	// every shard's creation (version 0) was copied already.
	f.Must(nil, hotkeys.NewTallies(f.S).Apply(ctx, store.PostPK(post.ID), map[int]store.ShardTally{0: {Likes: 1000, Version: 0}, 1: {Likes: 1000, Version: 0}}))
	check("an older tally applied")

	if _, err := f.S.DeletePost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	if left := f.itemsOf(post.ID); left != 0 {
		t.Errorf("%d items left of the deleted hot post", left)
	}
	if _, err := f.S.LikePost(ctx, users[5].ID, post.ID, nil); !errs.Is(err, errs.NotFound) {
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
	f := newStreamTest(t)
	ctx := t.Context()
	users, post := f.fansOfAPost(40)
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))
	f.Drain()
	var wg sync.WaitGroup
	for _, u := range users {
		wg.Go(func() {
			if _, err := f.S.LikePost(ctx, u.ID, post.ID, nil); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	f.Calls.FailUpdates(3) // fewer than the poller's retries (3) plus the first attempt
	f.Drain()
	if left := f.Calls.UpdatesToFail(); left != 0 {
		t.Fatalf("%d injected failures left: the projector wrote no counts", left)
	}
	p, err := f.S.Post(ctx, post.ID)
	if err != nil {
		t.Fatal(err)
	}
	if p.LikeCount != len(users) {
		t.Errorf("likeCount %d after the throttled projector, want %d", p.LikeCount, len(users))
	}
}

// A hot post's comments: written before it turned hot and after, by 40
// users at once through two stores (one that does not know the post is
// hot), one write in five refused as DynamoDB throttling it and tried
// again, some deleted (before and after, by their authors and by the
// post's author), the stream read by the projector and read again: its
// commentCount equals its comments, they page to the end oldest and newest
// first and in a time range with every comment once in order, the post's
// prefetch holds none of them, and deleting it leaves nothing behind.
func TestAHotPostsCommentsCountAndListExactly(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	users, post := f.fansOfAPost(40)
	comments := map[string]store.Comment{}
	var mu sync.Mutex
	comment := func(s *store.Store, u string) {
		// The largest comment the API takes: 2,000 four-byte characters.
		c, err := retried(func() (store.Comment, error) { return s.CreateComment(ctx, u, post.ID, strings.Repeat("𝄞", 2000)) })
		if err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		comments[c.ID] = c
		mu.Unlock()
	}
	uncomment := func(caller string, c store.Comment) {
		if _, err := f.S.DeleteComment(ctx, caller, post.ID, c.ID); err != nil {
			t.Error(err)
		}
		delete(comments, c.ID)
	}
	for _, u := range users[:5] { // before: in the post's own partition
		comment(f.S, u.ID)
	}
	before := slices.Collect(maps.Values(comments))
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))

	f.atOnceThrottled(users[5:], comment)
	if n := storetest.Count(t, storetest.Client(t), f.S.Table(), "", "pk", store.PostPK(post.ID), "sk", store.CommentPrefix); n != len(before)+2 {
		t.Errorf("%d items under COMMENT# in the post's own partition, want its %d comments from before and 2 markers", n, len(before))
	}
	var after []store.Comment
	for _, c := range comments {
		if !slices.ContainsFunc(before, func(b store.Comment) bool { return b.ID == c.ID }) {
			after = append(after, c)
		}
	}
	byID := func(a, b store.Comment) int { return strings.Compare(a.ID, b.ID) }
	slices.SortFunc(before, byID)
	slices.SortFunc(after, byID)
	uncomment(before[0].AuthorID, before[0]) // its author, before
	uncomment(sample.Alice, before[1])       // the post's author, before
	uncomment(after[0].AuthorID, after[0])   // its author, in a shard
	uncomment(sample.Alice, after[1])        // the post's author, in a shard
	// Someone else, on a comment in a shard that is not theirs (the first
	// left by another: map order once made it users[39]'s own).
	stranger := users[39].ID
	others := slices.DeleteFunc(slices.Clone(after[2:]), func(c store.Comment) bool { return c.AuthorID == stranger })
	if _, err := f.S.DeleteComment(ctx, stranger, post.ID, others[0].ID); !errs.Is(err, errs.Unauthorized) {
		t.Errorf("someone else deleting a comment in a shard: %v, want Unauthorized", err)
	}
	f.Drain()

	pageAll := func(s *store.Store, req store.PageRequest) []string {
		t.Helper()
		return storetest.IDs(t, func(req store.PageRequest) (store.Page[store.Comment], error) {
			return s.CommentsOnPost(ctx, post.ID, req)
		},
			req, func(c store.Comment) string { return c.ID })
	}
	freshStore := func() *store.Store { s, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread); return s } // knows nothing of the post
	check := func(when string) {
		t.Helper()
		p, err := f.S.Post(ctx, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		if p.CommentCount != len(comments) {
			t.Errorf("%s: commentCount %d, want %d", when, p.CommentCount, len(comments))
		}
		want := slices.Sorted(maps.Keys(comments)) // ULIDs: oldest first
		fresh := freshStore()
		for _, s := range []*store.Store{fresh, f.S} {
			if got := pageAll(s, store.PageRequest{Limit: 7}); !slices.Equal(got, want) {
				t.Errorf("%s: oldest first, listed %d comments %v, want %d %v", when, len(got), got, len(want), want)
			}
			newest := slices.Clone(want)
			slices.Reverse(newest)
			if got := pageAll(s, store.PageRequest{Limit: 6, Order: store.NewestFirst}); !slices.Equal(got, newest) {
				t.Errorf("%s: newest first, listed %v, want %v", when, got, newest)
			}
		}
		// A time range from before the first comment: the markers are outside it.
		if got := pageAll(freshStore(), store.PageRequest{Limit: 9, After: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}); !slices.Equal(got, want) {
			t.Errorf("%s: in a time range, listed %v, want %v", when, got, want)
		}
		// The largest page the API takes holds them all, and says so.
		whole, err := fresh.CommentsOnPost(ctx, post.ID, store.PageRequest{Limit: store.MaxLimit})
		if err != nil {
			t.Fatal(err)
		}
		if len(whole.Items) != len(comments) || whole.NextToken != nil {
			t.Errorf("%s: a page of %d holds %d comments (nextToken %v), want %d and none", when, store.MaxLimit, len(whole.Items), whole.NextToken != nil, len(comments))
		}
		_, pre, err := freshStore().PostWithComments(ctx, post.ID, store.PageRequest{Limit: 20}, 1<<20)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := f.S.CommentsFromPrefetch(pre, store.PageRequest{Limit: 20}); ok {
			t.Errorf("%s: the hot post's prefetch answers its comments", when)
		}
	}
	check("drained")
	f.Poller = streams.New(f.API, f.ARN, f.Fn, streams.Config{BatchSize: 7, Filter: streams.Matches(hotkeys.StreamFilters)}, &streams.Checkpoints{})
	f.Drain()
	check("read again")
	// One shard DynamoDB throttles: a page fails, Throttled, rather than end
	// short of that shard's comments.
	failing := store.New(&storetest.ThrottleQueriesOf{API: storetest.Client(t), PK: hotkeys.ShardPK(post.ID, 3)}, f.S.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread)
	for _, order := range []store.Order{store.OldestFirst, store.NewestFirst} {
		if page, err := failing.CommentsOnPost(ctx, post.ID, store.PageRequest{Limit: store.MaxLimit, Order: order}); !errs.Is(err, errs.Throttled) {
			t.Errorf("a page with a throttled shard: %d comments, error %v; want Throttled", len(page.Items), err)
		}
	}

	if _, err := f.S.DeletePost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	if left := f.itemsOf(post.ID); left != 0 {
		t.Errorf("%d items left of the deleted hot post", left)
	}
	if _, err := f.S.CreateComment(ctx, users[5].ID, post.ID, "late"); !errs.Is(err, errs.NotFound) {
		t.Errorf("a comment on the deleted hot post: %v, want NotFound", err)
	}
}

// The comment that finds HotThreshold comments on a post's counter turns
// the post hot and lands in a shard, counted.
func TestTheThresholdsCommentTurnsAPostHot(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "soon hot", Body: "h"})
	f.Must(post, err)
	// HotThreshold comments, as their count: the comments themselves would
	// take a thousand transactions.
	_, err = storetest.Client(t).UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.S.Table()),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: store.PostPK(post.ID)}, "sk": &types.AttributeValueMemberS{Value: store.SKCount}},
		UpdateExpression: aws.String("SET commentCount = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(hotkeys.HotThreshold)}}})
	f.Must(nil, err)
	c, err := f.S.CreateComment(ctx, sample.Bob, post.ID, "the one past")
	f.Must(c, err)
	shards := 0
	for n := range hotkeys.HotShards {
		shards += storetest.Count(t, storetest.Client(t), f.S.Table(), "", "pk", hotkeys.ShardPK(post.ID, n), "sk", store.CommentPrefix)
	}
	if shards != 1 {
		t.Errorf("%d comments in the post's shards, want 1", shards)
	}
	f.Drain()
	p, err := f.S.Post(ctx, post.ID)
	f.Must(p, err)
	if p.Shards == 0 || p.CommentCount != hotkeys.HotThreshold+1 {
		t.Errorf("shards %d, commentCount %d; want hot and %d", p.Shards, p.CommentCount, hotkeys.HotThreshold+1)
	}
}

// fansOfAPost loads n users and returns them with a new post of alice's.
func (f *streamTest) fansOfAPost(n int) ([]store.User, store.Post) {
	f.T.Helper()
	var users []store.User
	for i := range n {
		users = append(users, store.User{ID: fmt.Sprintf("u_fan%02d", i), Handle: fmt.Sprintf("fan%02d", i), Name: "Fan", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	if err := f.S.Load(f.T.Context(), store.Dataset{Users: users}); err != nil {
		f.T.Fatal(err)
	}
	post, err := f.S.CreatePost(f.T.Context(), sample.Alice, store.NewPost{Title: "hot", Body: "h"})
	f.Must(post, err)
	return users, post
}

// itemsOf counts the items of a post in its partition and its shards.
func (f *streamTest) itemsOf(postID string) int {
	f.T.Helper()
	c := storetest.Client(f.T)
	n := storetest.Count(f.T, c, f.S.Table(), "", "pk", store.PostPK(postID), "sk", "")
	for shard := range hotkeys.HotShards {
		n += storetest.Count(f.T, c, f.S.Table(), "", "pk", hotkeys.ShardPK(postID, shard), "sk", "")
	}
	return n
}

// A hot user's followers: followed before it turned hot and after, by 40
// users at once through two stores (one that does not know the user is
// hot, one write in five refused as throttled and sent again), some
// unfollowed (before and after) and one followed again, the stream read by
// the projector and read again: its followerCount, by ID and by handle,
// equals its followers, they page to the end in follower order with each
// once, and the projector's own list of them (FollowerIDs) holds them all.
func TestAHotUsersFollowersCountAndListExactly(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	users, _ := f.fansOfAPost(40)
	const star = "u_dave"
	followers := map[string]bool{}
	var mu sync.Mutex
	follow := func(s *store.Store, u string) {
		if _, err := retried(func() (store.Follow, error) { return s.Follow(ctx, u, star) }); err != nil {
			t.Error(err)
			return
		}
		mu.Lock()
		followers[u] = true
		mu.Unlock()
	}
	unfollow := func(u string) {
		if _, err := f.S.Unfollow(ctx, u, star); err != nil {
			t.Error(err)
		}
		delete(followers, u)
	}
	for _, u := range users[:10] { // before: in its own GSI2 partition
		follow(f.S, u.ID)
	}
	f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, star))
	f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, star)) // once hot, it changes nothing
	f.atOnceThrottled(users[10:], follow)
	if n := storetest.Count(t, storetest.Client(t), f.S.Table(), store.GSI2, "gsi2pk", store.FollowersPK(star), "gsi2sk", ""); n != 11 {
		t.Errorf("%d entries in the user's own GSI2 partition, want its 10 followers from before and the marker", n)
	}
	for _, u := range []string{users[1].ID, users[20].ID, users[33].ID} { // one from before, two in shards
		unfollow(u)
	}
	unknowing, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	follow(unknowing, users[20].ID) // followed again, into a shard, by a store that finds out
	follow(f.S, users[5].ID)        // again while following: changes nothing
	f.Drain()

	pageAll := func(s *store.Store) []string {
		t.Helper()
		return storetest.IDs(t, func(req store.PageRequest) (store.Page[store.Follow], error) { return s.Followers(ctx, star, req) },
			store.PageRequest{Limit: 7}, func(f store.Follow) string { return f.FollowerID })
	}
	check := func(when string) {
		t.Helper()
		want := slices.Sorted(maps.Keys(followers)) // GSI2 sorts by the follower's ID
		fresh, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
		u, err := fresh.User(ctx, star)
		f.Must(u, err)
		byHandle, err := fresh.UserByHandle(ctx, "dave")
		f.Must(byHandle, err)
		if u.FollowerCount != len(want) || byHandle.FollowerCount != len(want) {
			t.Errorf("%s: followerCount %d (by handle %d), want %d", when, u.FollowerCount, byHandle.FollowerCount, len(want))
		}
		for _, s := range []*store.Store{fresh, f.S} {
			if got := pageAll(s); !slices.Equal(got, want) {
				t.Errorf("%s: listed %d followers %v, want %d %v", when, len(got), got, len(want), want)
			}
		}
		whole, err := fresh.Followers(ctx, star, store.PageRequest{Limit: store.MaxLimit})
		f.Must(whole, err)
		if len(whole.Items) != len(want) || whole.NextToken != nil {
			t.Errorf("%s: a page of %d holds %d followers (nextToken %v), want %d and none", when, store.MaxLimit, len(whole.Items), whole.NextToken != nil, len(want))
		}
		ids, err := fresh.FollowerIDs(ctx, star)
		f.Must(ids, err)
		if slices.Sort(ids); !slices.Equal(ids, want) {
			t.Errorf("%s: FollowerIDs %v, want %v", when, ids, want)
		}
		u, err = fresh.User(ctx, star)
		f.Must(u, err)
		if u.FollowerCount != len(want) {
			t.Errorf("%s: followerCount %d, want %d", when, u.FollowerCount, len(want))
		}
		// Each count where its follows are: the user's own counter, of its own
		// GSI2 partition (less the marker), and each shard's, of its shard.
		c := storetest.Client(t)
		count := func(pk string) int {
			out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(f.S.Table()), Key: map[string]types.AttributeValue{
				"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: map[bool]string{true: store.SKCount, false: store.SKShard}[pk == store.UserPK(star)]}}})
			f.Must(out, err)
			n := 0
			if v, ok := out.Item["followerCount"].(*types.AttributeValueMemberN); ok {
				n, _ = strconv.Atoi(v.Value)
			}
			return n
		}
		if got, want := count(store.UserPK(star)), storetest.Count(t, c, f.S.Table(), store.GSI2, "gsi2pk", store.FollowersPK(star), "gsi2sk", "")-1; got != want {
			t.Errorf("%s: the user's own counter counts %d, its own GSI2 partition holds %d", when, got, want)
		}
		for n := range hotkeys.HotShards {
			if got, want := count(hotkeys.UserShardPK(star, n)), storetest.Count(t, c, f.S.Table(), store.GSI2, "gsi2pk", hotkeys.FollowersShardPK(star, n), "gsi2sk", ""); got != want {
				t.Errorf("%s: shard %d counts %d, holds %d", when, n, got, want)
			}
		}
	}
	check("drained")
	f.Poller = streams.New(f.API, f.ARN, f.Fn, streams.Config{BatchSize: 7, Filter: streams.Matches(hotkeys.StreamFilters)}, &streams.Checkpoints{})
	f.Drain()
	check("read again")
}

// The follow that finds HotThreshold followers on a user's counter turns
// the user hot and lands in a GSI2 shard, counted.
func TestTheThresholdsFollowTurnsAUserHot(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	_, err := storetest.Client(t).UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(f.S.Table()),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: store.UserPK("u_dave")}, "sk": &types.AttributeValueMemberS{Value: store.SKCount}},
		UpdateExpression: aws.String("SET followerCount = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(hotkeys.HotThreshold)}}})
	f.Must(nil, err)
	_, err = f.S.Follow(ctx, sample.Bob, "u_dave")
	f.Must(nil, err)
	shards := 0
	for n := range hotkeys.HotShards {
		shards += storetest.Count(t, storetest.Client(t), f.S.Table(), store.GSI2, "gsi2pk", hotkeys.FollowersShardPK("u_dave", n), "gsi2sk", "")
	}
	if shards != 1 {
		t.Errorf("%d follows in the user's GSI2 shards, want 1", shards)
	}
	f.Drain()
	u, err := f.S.User(ctx, "u_dave")
	f.Must(u, err)
	if u.Shards == 0 || u.FollowerCount != hotkeys.HotThreshold+1 {
		t.Errorf("shards %d, followerCount %d; want hot and %d", u.Shards, u.FollowerCount, hotkeys.HotThreshold+1)
	}
}

// retried is write tried again while it is Throttled, as a client does.
func retried[T any](write func() (T, error)) (T, error) {
	for {
		v, err := write()
		if !errs.Is(err, errs.Throttled) {
			return v, err
		}
	}
}

// atOnceThrottled runs write for every user at once, half of them through
// a second store, as another Lambda instance that knows nothing of what is
// hot, whose every fifth write DynamoDB refuses as throttled; it fails the
// test if none was refused.
func (f *streamTest) atOnceThrottled(users []store.User, write func(s *store.Store, user string)) {
	f.T.Helper()
	throttled := &storetest.ThrottleWrites{API: storetest.Client(f.T), Every: 5}
	other := store.New(throttled, f.S.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread)
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Go(func() {
			s := f.S
			if i%2 == 0 {
				s = other
			}
			write(s, u.ID)
		})
	}
	wg.Wait()
	if throttled.Refused == 0 {
		f.T.Fatal("no write was refused")
	}
}

// A listing begun before its user or post turned hot, resumed by a store
// that has not learned it, still lists what was written to the shards after
// its token: followers (whose IDs sort anywhere) of a user made hot between
// its pages, and comments in a time range, oldest first, of a post made hot
// between its pages (the range leaves out the markers). Each resumed page
// of a user or post not known hot reads the marker beside its Query.
func TestAListingBegunBeforeItTurnedHotListsWhatCameAfter(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	users, post := f.fansOfAPost(6)
	const star = "u_dave"
	for _, u := range users[:4] {
		_, err := f.S.Follow(ctx, u.ID, star)
		f.Must(nil, err)
	}
	for i := range 3 {
		_, err := f.S.CreateComment(ctx, users[i].ID, post.ID, "before")
		f.Must(nil, err)
	}
	begun, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	followers, err := begun.Followers(ctx, star, store.PageRequest{Limit: 1})
	f.Must(followers, err)
	ranged := store.PageRequest{Limit: 1, After: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), Before: time.Now().Add(time.Hour)}
	comments, err := begun.CommentsOnPost(ctx, post.ID, ranged)
	f.Must(comments, err)
	if followers.NextToken == nil || comments.NextToken == nil {
		t.Fatal("a first page was the last")
	}

	f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, star))
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))
	for _, u := range users[4:] { // u_fan04, u_fan05: after the token's u_fan00, in shards
		_, err := f.S.Follow(ctx, u.ID, star)
		f.Must(nil, err)
	}
	var after []string
	for i := 3; i < 5; i++ {
		c, err := f.S.CreateComment(ctx, users[i].ID, post.ID, "after")
		f.Must(c, err)
		after = append(after, c.ID)
	}

	fresh, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	rest := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Follow], error) { return fresh.Followers(ctx, star, r) },
		store.PageRequest{Limit: 1, NextToken: *followers.NextToken}, func(f store.Follow) string { return f.FollowerID })
	if want := []string{"u_fan01", "u_fan02", "u_fan03", "u_fan04", "u_fan05"}; !slices.Equal(rest, want) {
		t.Errorf("followers after the first page: %v, want %v", rest, want)
	}
	fresh, _ = storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	ranged.NextToken = *comments.NextToken
	got := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Comment], error) {
		return fresh.CommentsOnPost(ctx, post.ID, r)
	},
		ranged, func(c store.Comment) string { return c.ID })
	if len(got) != 4 || !slices.Equal(got[2:], after) {
		t.Errorf("comments after the first page: %v, want two from before and then %v", got, after)
	}
}
