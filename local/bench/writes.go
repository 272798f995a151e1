package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/budget"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/live"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/ddblocal"
)

// WriteCost is what one mutation cost DynamoDB, on one target: capacity
// units read and written, in all and where they landed (the table, GSI1,
// GSI2), as DynamoDB reports them with index detail, and the requests made.
type WriteCost struct {
	Mutation, Target string
	Read, Write      float64
	Where            map[string]costdetail.Units // "" is the table
	Requests         []string                    // "TransactWriteItems(2)": operation and keys or actions
}

// PushChunk is how many readers the writes table's pushFeed row pushes to.
const PushChunk = 100

// Targets of each size the API accepts.
const (
	smallBody  = 100
	mediumBody = 4000
	// The largest post: a 200-character title and a 20,000-character body,
	// every character four bytes in UTF-8.
	largestTitle, largestBody = 200, 20000
)

// four is a four-byte character (U+1F600).
const four = "\U0001F600"

// Writes measures every mutation the store has, on targets of each size:
// posts of 100 characters, 4,000 and the largest, users with the smallest
// and the largest profile. Each runs on a fresh table of DynamoDB Local at
// endpoint; the figures depend only on the items' sizes.
func Writes(ctx context.Context, endpoint string) ([]WriteCost, error) {
	s, drop, err := benchStore(ctx, ddblocal.Client(endpoint), "bench-writes")
	if err != nil {
		return nil, err
	}
	defer drop()
	m := &writes{ctx: ctx, s: s}
	m.run()
	return m.out, m.err
}

type writes struct {
	ctx context.Context
	s   *store.Store
	out []WriteCost
	err error
}

// measure runs fn and records what it cost as mutation on target.
func (w *writes) measure(mutation, target string, fn func(ctx context.Context) error) {
	if w.err != nil {
		return
	}
	ctx, meter := cost.WithMeter(cost.KeepRequests(w.ctx))
	if err := fn(ctx); err != nil {
		w.err = fmt.Errorf("%s on %s: %w", mutation, target, err)
		return
	}
	c := WriteCost{Mutation: mutation, Target: target, Where: map[string]costdetail.Units{}}
	for _, call := range meter.Calls() {
		c.Read += call.Read
		c.Write += call.Write
		for where, u := range costdetail.Where(call) {
			sum := c.Where[where]
			sum.Read += u.Read
			sum.Write += u.Write
			c.Where[where] = sum
		}
		c.Requests = append(c.Requests, fmt.Sprintf("%s(%d)", call.Operation, call.Keys))
	}
	w.out = append(w.out, c)
}

// setup runs fn unmeasured, keeping its first error.
func (w *writes) setup(fn func() error) {
	if w.err == nil {
		w.err = fn()
	}
}

func (w *writes) run() {
	type profile struct {
		name string
		user store.User
	}
	bio := strings.Repeat(four, 1000)
	profiles := []profile{
		{"the smallest profile", store.User{ID: "u_s", Handle: "sss", Name: "S", Email: ptr("s@e.io")}},
		{"the largest profile", store.User{ID: "u_" + strings.Repeat("l", 62), Handle: strings.Repeat("l", 30),
			Name: strings.Repeat(four, 100), Email: ptr(strings.Repeat("l", 64) + "@" + strings.Repeat(strings.Repeat("e", 61)+".", 3) + "com"), Bio: &bio}}, // 254 characters
	}
	reader := store.User{ID: "u_reader", Handle: "reader", Name: "Reader", Email: ptr("r@e.io")}
	for _, p := range profiles {
		w.measure("createUser", p.name, func(ctx context.Context) error { _, err := w.s.CreateUser(ctx, p.user); return err })
	}
	w.setup(func() error { _, err := w.s.CreateUser(w.ctx, reader); return err })
	for _, p := range profiles {
		name, bio := p.user.Name, p.user.Bio
		w.measure("updateUser", p.name, func(ctx context.Context) error { _, err := w.s.UpdateUser(ctx, p.user.ID, &name, bio); return err })
		w.measure("follow", p.name, func(ctx context.Context) error { _, err := w.s.Follow(ctx, reader.ID, p.user.ID); return err })
		w.measure("unfollow", p.name, func(ctx context.Context) error { _, err := w.s.Unfollow(ctx, reader.ID, p.user.ID); return err })
	}
	// The largest profile, hot (hotkeys.Layer.MakeUserHot): a follow's GSI2 entry
	// lands in one of its shards, counted on that shard's counter.
	const hotUser = "the largest profile, hot (its followers in 50 shards)"
	largest := profiles[1].user.ID
	w.setup(func() error { return hotkeys.Of(w.s).MakeUserHot(w.ctx, largest) })
	w.measure("follow", hotUser, func(ctx context.Context) error { _, err := w.s.Follow(ctx, reader.ID, largest); return err })
	w.measure("unfollow", hotUser, func(ctx context.Context) error { _, err := w.s.Unfollow(ctx, reader.ID, largest); return err })
	// What the deployed function adds to every mutation: its caller's count
	// of writes (budget.Charge, budget.WritesPerMinute).
	w.measure("(any mutation's write budget)", "the caller's count of writes this minute", func(ctx context.Context) error {
		return budget.New(w.s, budget.WritesPerMinute).Charge(ctx, reader.ID)
	})

	author := profiles[0].user.ID
	posts := []struct{ name, title, body string }{
		{"a post of 100 characters", "Title", strings.Repeat("b", smallBody)},
		{"a post of 4,000 characters", "Title", strings.Repeat("b", mediumBody)},
		{"the largest post", strings.Repeat(four, largestTitle), strings.Repeat(four, largestBody)},
	}
	for _, p := range posts {
		var post store.Post
		w.measure("createPost", p.name, func(ctx context.Context) error {
			var err error
			post, err = w.s.CreatePost(ctx, author, store.NewPost{Title: p.title, Body: p.body})
			return err
		})
		var comment store.Comment
		w.measure("createComment", p.name, func(ctx context.Context) error {
			var err error
			comment, err = w.s.CreateComment(ctx, reader.ID, post.ID, "A comment.")
			return err
		})
		w.measure("deleteComment", p.name, func(ctx context.Context) error {
			_, err := w.s.DeleteComment(ctx, reader.ID, post.ID, comment.ID)
			return err
		})
		counts := []string{"id", "likeCount"} // the answer a like button reads
		w.measure("likePost", p.name, func(ctx context.Context) error {
			_, err := w.s.LikePost(ctx, reader.ID, post.ID, counts)
			return err
		})
		w.measure("unlikePost", p.name, func(ctx context.Context) error {
			_, err := w.s.UnlikePost(ctx, reader.ID, post.ID, counts)
			return err
		})
		w.measure("updatePost", p.name, func(ctx context.Context) error {
			_, err := w.s.UpdatePost(ctx, author, post.ID, store.PostEdit{Title: &p.title, Body: &p.body})
			return err
		})
		w.measure("deletePost, no comments", p.name, func(ctx context.Context) error {
			_, err := w.s.DeletePost(ctx, author, post.ID)
			return err
		})
		var draft store.Post
		w.setup(func() error {
			var err error
			draft, err = w.s.CreatePost(w.ctx, author, store.NewPost{Title: p.title, Body: p.body, Draft: true})
			return err
		})
		w.measure("publishPost", p.name, func(ctx context.Context) error {
			_, err := w.s.PublishPost(ctx, author, draft.ID)
			return err
		})
		for range 10 {
			w.setup(func() error { _, err := w.s.CreateComment(w.ctx, reader.ID, draft.ID, "A comment."); return err })
		}
		w.measure("deletePost, 10 comments", p.name, func(ctx context.Context) error {
			_, err := w.s.DeletePost(ctx, author, draft.ID)
			return err
		})
	}

	// A deleted post's subscriptions ended (lambda/live's
	// Mutation.invalidatePost, which the projector calls): it writes
	// nothing, and reads that the post is gone.
	var gone store.Post
	w.setup(func() error {
		var err error
		if gone, err = w.s.CreatePost(w.ctx, author, store.NewPost{Title: "Gone", Body: "b"}); err == nil {
			_, err = w.s.DeletePost(w.ctx, author, gone.ID)
		}
		return err
	})
	w.measure("invalidatePost", "a deleted post", func(ctx context.Context) error {
		if _, err := w.s.Post(ctx, gone.ID); !errs.Is(err, errs.NotFound) {
			return fmt.Errorf("the deleted post read as %v", err)
		}
		return nil
	})

	// A post pushed to a chunk of its author's followers (lambda/live's
	// Mutation.pushFeed, which the projector calls): the post and each
	// reader's follow read strongly consistent, the post's marker moved.
	var pushed store.Post
	var chunk []string
	w.setup(func() error {
		var d store.Dataset
		for i := range PushChunk {
			chunk = append(chunk, fmt.Sprintf("u_reader%03d", i))
			d.Follows = append(d.Follows, store.Follow{FollowerID: chunk[i], FollowedID: author, CreatedAt: "2024-05-01T00:00:00.000Z"})
		}
		var err error
		if err = w.s.Load(w.ctx, d); err == nil {
			pushed, err = w.s.CreatePost(w.ctx, author, store.NewPost{Title: "Pushed", Body: strings.Repeat("b", smallBody)})
		}
		return err
	})
	w.measure("pushFeed", fmt.Sprintf("a chunk of %d followers", PushChunk), func(ctx context.Context) error {
		_, err := live.NewPushes(w.s).Push(ctx, pushed.ID, "", chunk)
		return err
	})

	// A post of a high-follower author, whose counter the projector has put
	// on GSI1 (store.IndexCounters): what its comments and likes cost.
	const pulled = "a post read at read time (its counter on GSI1)"
	var post store.Post
	w.setup(func() error {
		var err error
		if post, err = w.s.CreatePost(w.ctx, author, store.NewPost{Title: "Title", Body: strings.Repeat("b", smallBody)}); err != nil {
			return err
		}
		return feed.NewTable(w.s).IndexCounters(w.ctx, author, []feed.Entry{{Place: store.PublishedSK(post.ID), PostID: post.ID}})
	})
	w.measure("createComment", pulled, func(ctx context.Context) error {
		_, err := w.s.CreateComment(ctx, reader.ID, post.ID, "A comment.")
		return err
	})
	w.measure("likePost", pulled, func(ctx context.Context) error {
		_, err := w.s.LikePost(ctx, reader.ID, post.ID, []string{"id", "likeCount"})
		return err
	})

	// The largest post, hot (hotkeys.Layer.MakeHot): a like lands in one of its
	// shards, counted on that shard's counter.
	const hot = "the largest post, hot (its likes in 50 shards)"
	var hotPost store.Post
	w.setup(func() error {
		var err error
		if hotPost, err = w.s.CreatePost(w.ctx, author, store.NewPost{Title: posts[2].title, Body: posts[2].body}); err != nil {
			return err
		}
		return hotkeys.Of(w.s).MakeHot(w.ctx, hotPost.ID)
	})
	counts := []string{"id", "likeCount"}
	w.measure("likePost", hot, func(ctx context.Context) error {
		_, err := w.s.LikePost(ctx, reader.ID, hotPost.ID, counts)
		return err
	})
	w.measure("unlikePost", hot, func(ctx context.Context) error {
		_, err := w.s.UnlikePost(ctx, reader.ID, hotPost.ID, counts)
		return err
	})
	// Its comments land in 8 of the shards, the shard named by the ID.
	const hotComments = "the largest post, hot (its comments in 8 shards)"
	var c store.Comment
	w.measure("createComment", hotComments, func(ctx context.Context) error {
		var err error
		c, err = w.s.CreateComment(ctx, reader.ID, hotPost.ID, "A comment.")
		return err
	})
	w.measure("deleteComment", hotComments, func(ctx context.Context) error {
		_, err := w.s.DeleteComment(ctx, reader.ID, hotPost.ID, c.ID)
		return err
	})
}

func ptr(s string) *string { return &s }

// PrintWrites writes the table of what every mutation costs.
func PrintWrites(w io.Writer, costs []WriteCost) {
	fmt.Fprintln(w, "| Mutation | Target | WCU | on the table | on GSI1 | on GSI2 | RCU | Requests (keys or actions) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---|")
	for _, c := range costs {
		fmt.Fprintf(w, "| %s | %s | %g | %g | %g | %g | %g | %s |\n", c.Mutation, c.Target, c.Write,
			c.Where[""].Write, c.Where[store.GSI1].Write, c.Where[store.GSI2].Write, c.Read, strings.Join(compact(c.Requests), ", "))
	}
}

// compact writes repeated requests once, with a count: "BatchWriteItem(1) x2".
func compact(reqs []string) []string {
	var out []string
	for i := 0; i < len(reqs); {
		j := i
		for j < len(reqs) && reqs[j] == reqs[i] {
			j++
		}
		if j-i > 1 {
			out = append(out, fmt.Sprintf("%s x%d", reqs[i], j-i))
		} else {
			out = append(out, reqs[i])
		}
		i = j
	}
	return slices.Clip(out)
}
