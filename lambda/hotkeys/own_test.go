package hotkeys_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// counts are a hot post's counts as one read answers them.
type counts struct{ likes, comments int }

func postCounts(t *testing.T, s *store.Store, id string) counts {
	t.Helper()
	p, err := s.Post(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return counts{p.LikeCount, p.CommentCount}
}

// In the execution environment that wrote, a hot post's and a hot user's
// counts include its own writes at once, through every read (the like's own
// answer, the post, the batch of posts, the user by ID and by handle),
// before the projector has copied a shard's tally: 20 likes at once and
// comments, unlikes, deletions, follows and unfollows. Once the projector
// has copied them, a new environment reads the same counts. (The stores
// here keep no hot page: lambda/hotpage drops its page on its own writes,
// so that its reads are the store's, and tests that there.)
func TestTheWriterReadsItsOwnCountsAtOnce(t *testing.T) {
	f := newStreamTest(t)
	ctx := t.Context()
	fans, post := f.fansOfAPost(20)
	f.Must(nil, hotkeys.Of(f.S).MakeHot(ctx, post.ID))
	f.Must(nil, hotkeys.Of(f.S).MakeUserHot(ctx, sample.Bob))
	f.Drain()
	writer, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	other, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	before := postCounts(t, other, post.ID) // learns it hot, and keeps its page
	postCounts(t, writer, post.ID)

	var wg sync.WaitGroup
	for _, fan := range fans {
		wg.Go(func() {
			p, err := writer.LikePost(ctx, fan.ID, post.ID, []string{"likeCount"})
			if err != nil {
				t.Error(err)
			} else if p.LikeCount < 1 {
				t.Errorf("a like's answer counts %d likes", p.LikeCount)
			}
		})
	}
	wg.Wait()
	p, err := writer.LikePost(ctx, fans[0].ID, post.ID, []string{"likeCount"}) // liked already: its answer
	f.Must(p, err)
	want := counts{before.likes + len(fans), before.comments}
	if p.LikeCount != want.likes {
		t.Errorf("the answer of a like after %d: likeCount %d, want %d", len(fans), p.LikeCount, want.likes)
	}
	check := func(when string) {
		t.Helper()
		if got := postCounts(t, writer, post.ID); got != want {
			t.Errorf("%s, the writer reads %+v, want %+v", when, got, want)
		}
		posts, err := writer.Posts(ctx, []string{post.ID})
		f.Must(posts, err)
		if got := (counts{posts[post.ID].LikeCount, posts[post.ID].CommentCount}); got != want {
			t.Errorf("%s, the writer's Posts reads %+v, want %+v", when, got, want)
		}
	}
	check("after the likes")
	var comments []store.Comment
	for i := range 3 {
		c, err := writer.CreateComment(ctx, fans[i].ID, post.ID, fmt.Sprint("first 🚀 ", i))
		f.Must(c, err)
		comments = append(comments, c)
		want.comments++
		check(fmt.Sprintf("after comment %d", i+1))
	}
	f.Must(writer.DeleteComment(ctx, comments[0].AuthorID, post.ID, comments[0].ID))
	want.comments--
	check("after a deletion")
	f.Must(writer.UnlikePost(ctx, fans[1].ID, post.ID, nil))
	want.likes--
	check("after an unlike")
	if got := postCounts(t, other, post.ID); got != before {
		t.Logf("the other environment reads %+v within its page's TTL (%+v before)", got, before)
	}

	bob, err := writer.User(ctx, sample.Bob)
	f.Must(bob, err)
	for i, fan := range fans[:5] {
		f.Must(writer.Follow(ctx, fan.ID, sample.Bob))
		if i == 4 {
			f.Must(writer.Unfollow(ctx, fans[0].ID, sample.Bob))
		}
	}
	for _, read := range []func() (store.User, error){
		func() (store.User, error) { return writer.User(ctx, sample.Bob) },
		func() (store.User, error) { return writer.UserByHandle(ctx, "bob") },
	} {
		u, err := read()
		f.Must(u, err)
		if u.FollowerCount != bob.FollowerCount+4 {
			t.Errorf("bob's followers as the writer reads them: %d, want %d", u.FollowerCount, bob.FollowerCount+4)
		}
	}

	f.Drain() // the projector copies the shards' tallies
	fresh, _ := storetest.StoreOn(t, f.S.Table(), hotkeys.Spread)
	if got := postCounts(t, fresh, post.ID); got != want {
		t.Errorf("once copied, a new environment reads %+v, want %+v", got, want)
	}
	check("once copied")
}
