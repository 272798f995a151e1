package hotkeys_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// Races at the hot thresholds (issue 36): what one Lambda environment writes
// between another's read and the write that follows it. Each test holds one
// store's request (storetest.Meanwhile) while another store writes, then
// checks every write answered ok is there and every counter against the
// items of its own partition.

// meanwhile returns a store of f's table whose first request that before
// accepts waits for do to run first, and the wrapper that tells whether it
// ran.
func (f *streamTest) meanwhile(before func(any) bool, do func()) (*store.Store, *storetest.Meanwhile) {
	m := &storetest.Meanwhile{API: storetest.Client(f.T), Before: before, Do: do}
	return store.New(m, f.S.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread), m
}

// setCount sets a count on the counter of partition pk, as that many
// writes would (a thousand transactions each test would otherwise take).
func (f *streamTest) setCount(pk, count string, n int) {
	f.T.Helper()
	_, err := storetest.Client(f.T).UpdateItem(f.T.Context(), &dynamodb.UpdateItemInput{TableName: aws.String(f.S.Table()),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: store.SKCount}},
		UpdateExpression: aws.String("SET #c = :n"), ExpressionAttributeNames: map[string]string{"#c": count},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: strconv.Itoa(n)}}})
	f.Must(nil, err)
}

// counted returns a count of the item pk, sk as it is in the table (0 when
// absent).
func (f *streamTest) counted(pk, sk, count string) int {
	f.T.Helper()
	out, err := storetest.Client(f.T).GetItem(f.T.Context(), &dynamodb.GetItemInput{TableName: aws.String(f.S.Table()), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
	f.Must(out, err)
	n := 0
	if v, ok := out.Item[count].(*types.AttributeValueMemberN); ok {
		n, _ = strconv.Atoi(v.Value)
	}
	return n
}

// checkPost checks each of the post's counters against the items where its
// comments and likes are: its own counter (less base, what setCount put on
// it) against its own partition (less a hot post's markers), each shard's
// against its shard. It returns the comments and likes in all of them.
func (f *streamTest) checkPost(when, postID string, base map[string]int) (comments, likes int) {
	f.T.Helper()
	c := storetest.Client(f.T)
	hot := f.counted(store.PostPK(postID), store.SKCount, "shards") > 0
	for _, kind := range []struct{ count, prefix string }{{"commentCount", store.CommentPrefix}, {"likeCount", store.LikePrefix}} {
		own := storetest.Count(f.T, c, f.S.Table(), "", "pk", store.PostPK(postID), "sk", kind.prefix)
		if hot && kind.prefix == store.CommentPrefix {
			own -= 2 // COMMENT#! and COMMENT#~
		} else if hot {
			own-- // LIKE#~
		}
		if got := f.counted(store.PostPK(postID), store.SKCount, kind.count) - base[kind.count]; got != own {
			f.T.Errorf("%s: the post's own %s counts %d, its partition holds %d", when, kind.count, got, own)
		}
		total := own
		for n := range hotkeys.HotShards {
			held := storetest.Count(f.T, c, f.S.Table(), "", "pk", hotkeys.ShardPK(postID, n), "sk", kind.prefix)
			if got := f.counted(hotkeys.ShardPK(postID, n), store.SKShard, kind.count); got != held {
				f.T.Errorf("%s: shard %d's %s counts %d, it holds %d", when, n, kind.count, got, held)
			}
			total += held
		}
		if kind.prefix == store.CommentPrefix {
			comments = total
		} else {
			likes = total
		}
	}
	return comments, likes
}

// checkFollowed checks the user's follower counters against its GSI2
// partitions (its own, less a hot user's marker, less base; each shard's),
// and each follower's followingCount against its follows; it returns the
// user's followers in all of them.
func (f *streamTest) checkFollowed(when, userID string, base int, followers ...string) int {
	f.T.Helper()
	c := storetest.Client(f.T)
	own := storetest.Count(f.T, c, f.S.Table(), store.GSI2, "gsi2pk", store.FollowersPK(userID), "gsi2sk", "")
	if f.counted(store.UserPK(userID), store.SKCount, "shards") > 0 {
		own-- // the marker
	}
	if got := f.counted(store.UserPK(userID), store.SKCount, "followerCount") - base; got != own {
		f.T.Errorf("%s: the user's own followerCount counts %d, its GSI2 partition holds %d", when, got, own)
	}
	total := own
	for n := range hotkeys.HotShards {
		held := storetest.Count(f.T, c, f.S.Table(), store.GSI2, "gsi2pk", hotkeys.FollowersShardPK(userID, n), "gsi2sk", "")
		if got := f.counted(hotkeys.UserShardPK(userID, n), store.SKShard, "followerCount"); got != held {
			f.T.Errorf("%s: shard %d counts %d followers, holds %d", when, n, got, held)
		}
		total += held
	}
	for _, u := range followers {
		if got, held := f.counted(store.UserPK(u), store.SKCount, "followingCount"), storetest.Count(f.T, c, f.S.Table(), "", "pk", store.UserPK(u), "sk", store.FollowsPrefix); got != held {
			f.T.Errorf("%s: %s's followingCount counts %d, it holds %d follows", when, u, got, held)
		}
	}
	return total
}

// A write that meets a post or user another store turned hot between its
// own read and its write is carried out on the shards, as if it had turned
// it hot itself: never answered NotFound (a client would not retry it).
func TestAWriteThatMeetsAnotherStoresHotTargetGoesToItsShards(t *testing.T) {
	ctx := t.Context()
	t.Run("a comment past the threshold", func(t *testing.T) {
		f := newStreamTest(t)
		post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "soon hot", Body: "h"})
		f.Must(post, err)
		f.setCount(store.PostPK(post.ID), "commentCount", hotkeys.HotThreshold)
		// The comment finds the threshold and turns the post hot: another
		// store does so first, just before it reads the counter again.
		other, m := f.meanwhile(storetest.GetOf(store.PostPK(post.ID), store.SKCount), func() { f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID)) })
		c, err := other.CreateComment(ctx, sample.Bob, post.ID, "the one past")
		if err != nil || !m.Ran() {
			t.Fatalf("CreateComment: %v (the other store turned it hot first: %v)", err, m.Ran())
		}
		f.Drain()
		if comments, _ := f.checkPost("drained", post.ID, map[string]int{"commentCount": hotkeys.HotThreshold}); comments != 1 {
			t.Errorf("%d comments stored, want 1 (%s)", comments, c.ID)
		}
		p, err := f.S.Post(ctx, post.ID)
		if f.Must(p, err); p.CommentCount != hotkeys.HotThreshold+1 {
			t.Errorf("commentCount %d, want %d", p.CommentCount, hotkeys.HotThreshold+1)
		}
	})
	t.Run("a follow past the threshold", func(t *testing.T) {
		f := newStreamTest(t)
		f.setCount(store.UserPK("u_dave"), "followerCount", hotkeys.HotThreshold)
		other, m := f.meanwhile(storetest.GetOf(store.UserPK("u_dave"), store.SKCount), func() { f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, "u_dave")) })
		if _, err := other.Follow(ctx, sample.Bob, "u_dave"); err != nil || !m.Ran() {
			t.Fatalf("Follow: %v (the other store turned the user hot first: %v)", err, m.Ran())
		}
		f.Drain()
		if n := f.checkFollowed("drained", "u_dave", hotkeys.HotThreshold, sample.Bob); n != 1 {
			t.Errorf("%d follows stored, want 1", n)
		}
	})
	t.Run("a like of a post turned hot meanwhile", func(t *testing.T) {
		f := newStreamTest(t)
		post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "soon hot", Body: "h"})
		f.Must(post, err)
		other, m := f.meanwhile(storetest.TransactionOn(store.PostPK(post.ID), store.SKCount), func() { f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID)) })
		if _, err := other.LikePost(ctx, sample.Bob, post.ID, nil); err != nil || !m.Ran() {
			t.Fatalf("LikePost: %v (the other store turned it hot first: %v)", err, m.Ran())
		}
		f.Drain()
		if _, likes := f.checkPost("drained", post.ID, nil); likes != 1 {
			t.Errorf("%d likes stored, want 1", likes)
		}
	})
}

// Two stores, neither knowing what the other turned hot, write across each
// threshold at once (comments and likes of a post, follows of a user): every
// write answered ok is stored, once, and every counter counts what its
// partition holds.
func TestTwoStoresRacingTheThresholds(t *testing.T) {
	ctx := t.Context()
	const writers, below = 40, 10
	storm := func(f *streamTest, users []store.User, write func(s *store.Store, user string) error) {
		t.Helper()
		other, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
		var wg sync.WaitGroup
		for i, u := range users[:writers] {
			wg.Go(func() {
				s := f.S
				if i%2 == 0 {
					s = other
				}
				if _, err := retried(func() (any, error) { return nil, write(s, u.ID) }); err != nil {
					t.Errorf("%s: %v", u.ID, err)
				}
			})
		}
		wg.Wait()
		f.Drain()
	}
	for _, c := range []struct {
		kind, counter string
		write         func(s *store.Store, u, post string) error
		stored        func(comments, likes int) int
		counted       func(store.Post) int
	}{
		{"comments", "commentCount",
			func(s *store.Store, u, post string) error {
				_, err := s.CreateComment(ctx, u, post, "at once")
				return err
			},
			func(comments, _ int) int { return comments }, func(p store.Post) int { return p.CommentCount }},
		{"likes", "likeCount",
			func(s *store.Store, u, post string) error { _, err := s.LikePost(ctx, u, post, nil); return err },
			func(_, likes int) int { return likes }, func(p store.Post) int { return p.LikeCount }},
	} {
		t.Run(c.kind, func(t *testing.T) {
			f := newStreamTest(t)
			users, post := f.fansOfAPost(writers)
			f.setCount(store.PostPK(post.ID), c.counter, hotkeys.HotThreshold-below)
			storm(f, users, func(s *store.Store, u string) error { return c.write(s, u, post.ID) })
			if n := c.stored(f.checkPost("drained", post.ID, map[string]int{c.counter: hotkeys.HotThreshold - below})); n != writers {
				t.Errorf("%d %s stored, want %d", n, c.kind, writers)
			}
			p, err := f.S.Post(ctx, post.ID)
			if f.Must(p, err); p.Shards == 0 || c.counted(p) != hotkeys.HotThreshold-below+writers {
				t.Errorf("shards %d, %s %d; want hot and %d", p.Shards, c.counter, c.counted(p), hotkeys.HotThreshold-below+writers)
			}
		})
	}
	t.Run("follows", func(t *testing.T) {
		f := newStreamTest(t)
		users, _ := f.fansOfAPost(writers)
		f.setCount(store.UserPK("u_dave"), "followerCount", hotkeys.HotThreshold-below)
		storm(f, users, func(s *store.Store, u string) error { _, err := s.Follow(ctx, u, "u_dave"); return err })
		ids := make([]string, writers)
		for i, u := range users[:writers] {
			ids[i] = u.ID
		}
		if n := f.checkFollowed("drained", "u_dave", hotkeys.HotThreshold-below, ids...); n != writers {
			t.Errorf("%d follows stored, want %d", n, writers)
		}
		u, err := f.S.User(ctx, "u_dave")
		if f.Must(u, err); u.Shards == 0 || u.FollowerCount != hotkeys.HotThreshold-below+writers {
			t.Errorf("shards %d, followerCount %d; want hot and %d", u.Shards, u.FollowerCount, hotkeys.HotThreshold-below+writers)
		}
	})
}

// Every write that removes or changes an item it read acts on that item as
// read, never on one written meanwhile: each is held between its read and
// its write while another store changes the item, and every counter then
// counts what its partition holds.
func TestAWriteHeldBetweenItsReadAndItsWriteActsOnWhatItRead(t *testing.T) {
	ctx := t.Context()
	// An unfollow held while another store unfollows and follows again
	// (into a shard, when the user turns hot meanwhile): the follow made
	// again stays.
	for _, hot := range []bool{false, true} {
		t.Run(fmt.Sprintf("an unfollow, the user turned hot meanwhile: %v", hot), func(t *testing.T) {
			f := newStreamTest(t)
			_, err := f.S.Follow(ctx, sample.Bob, "u_dave")
			f.Must(nil, err)
			other, m := f.meanwhile(storetest.TransactionOn(store.UserPK(sample.Bob), store.FollowsSK("u_dave")), func() {
				_, err := f.S.Unfollow(ctx, sample.Bob, "u_dave")
				f.Must(nil, err)
				if hot {
					f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, "u_dave"))
				}
				_, err = f.S.Follow(ctx, sample.Bob, "u_dave")
				f.Must(nil, err)
			})
			if _, err := other.Unfollow(ctx, sample.Bob, "u_dave"); err != nil || !m.Ran() {
				t.Fatalf("Unfollow: %v (held: %v)", err, m.Ran())
			}
			f.Drain()
			if n := f.checkFollowed("drained", "u_dave", 0, sample.Bob); n != 1 {
				t.Errorf("%d follows of dave stored, want bob's made again", n)
			}
			following, err := f.S.Following(ctx, sample.Bob, store.PageRequest{Limit: 10})
			if f.Must(following, err); len(following.Items) != 1 {
				t.Errorf("bob follows %d users, want dave", len(following.Items))
			}
		})
	}
	t.Run("an unlike, the post liked again meanwhile", func(t *testing.T) {
		f := newStreamTest(t)
		post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "liked", Body: "l"})
		f.Must(post, err)
		_, err = f.S.LikePost(ctx, sample.Bob, post.ID, nil)
		f.Must(nil, err)
		other, m := f.meanwhile(storetest.TransactionOn(store.UserPK(sample.Bob), store.LikedSK(post.ID)), func() {
			_, err := f.S.UnlikePost(ctx, sample.Bob, post.ID, nil)
			f.Must(nil, err)
			f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))
			_, err = f.S.LikePost(ctx, sample.Bob, post.ID, nil)
			f.Must(nil, err)
		})
		if _, err := other.UnlikePost(ctx, sample.Bob, post.ID, nil); err != nil || !m.Ran() {
			t.Fatalf("UnlikePost: %v (held: %v)", err, m.Ran())
		}
		f.Drain()
		if _, likes := f.checkPost("drained", post.ID, nil); likes != 1 {
			t.Errorf("%d likes stored, want bob's made again", likes)
		}
	})
	t.Run("a comment's deletion, deleted meanwhile", func(t *testing.T) {
		f := newStreamTest(t)
		post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "commented", Body: "c"})
		f.Must(post, err)
		c, err := f.S.CreateComment(ctx, sample.Bob, post.ID, "once")
		f.Must(c, err)
		other, m := f.meanwhile(storetest.TransactionOn(store.PostPK(post.ID), store.CommentSK(c.ID)), func() {
			_, err := f.S.DeleteComment(ctx, sample.Alice, post.ID, c.ID)
			f.Must(nil, err)
		})
		if _, err := other.DeleteComment(ctx, sample.Bob, post.ID, c.ID); !errs.Is(err, errs.NotFound) || !m.Ran() {
			t.Fatalf("DeleteComment: %v, want NotFound (held: %v)", err, m.Ran())
		}
		if comments, _ := f.checkPost("after", post.ID, nil); comments != 0 {
			t.Errorf("%d comments stored, want none", comments)
		}
	})
	for _, op := range []string{"publishPost", "deletePost"} {
		t.Run(op+", the post edited meanwhile", func(t *testing.T) {
			f := newStreamTest(t)
			base := f.counted(store.UserPK(sample.Alice), store.SKCount, "postCount") // the sample's count, of no post here
			post, err := f.S.CreatePost(ctx, sample.Alice, store.NewPost{Title: "before", Body: "b", Draft: op == "publishPost"})
			f.Must(post, err)
			title := "edited meanwhile"
			other, m := f.meanwhile(storetest.TransactionOn(store.PostPK(post.ID), store.SKMetadata), func() {
				_, err := f.S.UpdatePost(ctx, sample.Alice, post.ID, store.PostEdit{Title: &title})
				f.Must(nil, err)
			})
			var got store.Post
			if op == "publishPost" {
				got, err = other.PublishPost(ctx, sample.Alice, post.ID)
			} else {
				got, err = other.DeletePost(ctx, sample.Alice, post.ID)
			}
			if err != nil || !m.Ran() || got.Title != title {
				t.Fatalf("%s: %+v, %v (held: %v); want the post as it was when it changed, titled %q", op, got, err, m.Ran(), title)
			}
			want := map[string]int{"publishPost": 1, "deletePost": 0}[op]
			if got, held := f.counted(store.UserPK(sample.Alice), store.SKCount, "postCount")-base,
				storetest.Count(t, storetest.Client(t), f.S.Table(), store.GSI1, "gsi1pk", store.UserPK(sample.Alice), "gsi1sk", store.PostPrefix); got != held || held != want {
				t.Errorf("alice's postCount counts %d, GSI1 holds %d published posts, want %d", got, held, want)
			}
		})
	}
}
