package trending

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/kept"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Ranked is a post of a ranking, with what it received in the window.
type Ranked struct {
	Post store.Post
	Count
}

// Ranking returns up to limit (at most MaxPosts) published posts by their
// score in the window at the store's now, highest first, ties to the newer
// post (the greater ID): one BatchGetItem of the window's buckets and one
// of its top posts (with their counts), kept for KeepFor in the
// environment. A deleted post and a draft are left out. An unknown window
// is a Validation error.
func (b *Buckets) Ranking(ctx context.Context, window Window, limit int) ([]Ranked, error) {
	const op = "trending.Ranking"
	if _, ok := Spans[window]; !ok {
		return nil, errs.E(op, errs.Validation, "no such window: "+string(window))
	}
	top, err := b.through(ctx, window, func(ctx context.Context) ([]Ranked, error) { return b.read(ctx, op, window) })
	if err != nil {
		return nil, err
	}
	return top[:min(limit, len(top))], nil
}

// read reads the window's ranking, as Ranking returns it, from the table.
func (b *Buckets) read(ctx context.Context, op string, window Window) ([]Ranked, error) {
	ranked, err := b.rank(ctx, op, window)
	if err != nil {
		return nil, err
	}
	var top []Ranked
	for len(ranked) > 0 && len(top) < MaxPosts {
		n := min(len(ranked), maxPostsRead)
		ids := make([]string, n)
		for i := range n {
			ids[i] = ranked[i].Post.ID
		}
		posts, err := b.s.Posts(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, t := range ranked[:n] {
			if p, ok := posts[t.Post.ID]; ok && p.Published() && len(top) < MaxPosts {
				top = append(top, Ranked{Post: p, Count: t.Count})
			}
		}
		ranked = ranked[n:]
	}
	return top, nil
}

// maxPostsRead is the posts a ranking reads at once: BatchGetItem's 100
// keys, a post's own item and its counter each.
const maxPostsRead = 50

// rank sums the window's buckets at now: the posts with a positive score,
// by score and then ID, both descending.
func (b *Buckets) rank(ctx context.Context, op string, window Window) ([]Ranked, error) {
	w := Spans[window]
	now := b.s.Now().UTC().Truncate(w.Length)
	keys := make([]store.Key, 0, w.Buckets*w.Parts)
	for i := range w.Buckets {
		for part := range w.Parts {
			keys = append(keys, store.Key{PK: bucketPK(w.Length, now.Add(-time.Duration(i)*w.Length), part), SK: trendSK})
		}
	}
	items, err := b.s.BatchGet(ctx, op, keys, nil)
	if err != nil {
		return nil, err
	}
	sums, err := sumParts(op, items)
	if err != nil {
		return nil, err
	}
	ranked := make([]Ranked, 0, len(sums))
	for id, c := range sums {
		if c.Score() > 0 {
			ranked = append(ranked, Ranked{Post: store.Post{ID: id}, Count: c})
		}
	}
	sort.Slice(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		return a.Score() > b.Score() || a.Score() == b.Score() && a.Post.ID > b.Post.ID
	})
	return ranked, nil
}

// through returns the window's ranking kept within b.keep, or reads it
// with read (kept.Through: once for every caller that misses it meanwhile;
// a failed read is not kept).
func (b *Buckets) through(ctx context.Context, window Window, read func(context.Context) ([]Ranked, error)) ([]Ranked, error) {
	if b.keep <= 0 {
		return read(ctx)
	}
	v, err := kept.Through(ctx, &b.mu, b.s.Now, b.keep,
		func() *kept.Value[[]Ranked] { return b.kept[window] },
		func(k *kept.Value[[]Ranked]) { b.kept[window] = k }, read)
	if errors.Is(err, kept.ErrWaitCut) {
		err = store.Fail("trending.Ranking", err)
	}
	return v, err
}
