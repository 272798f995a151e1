package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The pattern: a parent whose selection includes one of its connections
// reads the connection's first page together with itself, in one Query of
// its partition, and passes it down on the object it returns. The child
// resolver, whose event carries that object as source, serves its page from
// it without a request when the prefetch covers its arguments, and queries
// otherwise.

// prefetchLimit decides whether ev's connection field conn can be read with
// its parent, and returns the first page to read: the largest limit any
// alias asks for. It declines when the selection cannot be read, a variable
// is missing, or the first pages differ in order or range (docs/pattern.md).
func (h *Handler) prefetchLimit(ctx context.Context, ev *appsync.Event, conn string) (store.PageRequest, bool) {
	var first store.PageRequest
	if !strings.Contains(ev.Info.SelectionSetGraphQL, conn) {
		return first, false // not selected (or only in a fragment, which declines too): no parse
	}
	set, err := h.selectionOf(ev)
	if err != nil || hidesChildren(set) {
		return first, false
	}
	seen := false
	for _, f := range set.Named(conn) {
		if f.Unknown {
			return first, false
		}
		if token, ok := f.Args["nextToken"]; ok && token != nil {
			continue // a later page: that alias queries on its own
		}
		var args pageArgs
		if raw, err := json.Marshal(f.Args); err != nil || json.Unmarshal(raw, &args) != nil || args.validate() != nil {
			return first, false // the child reports the bad argument
		}
		req := args.request(ctx)
		if seen && store.CommentsShape(req) != store.CommentsShape(first) {
			return first, false // first pages of different shapes: each child reads its own
		}
		if !seen || req.Limit > first.Limit {
			first.Limit = req.Limit
		}
		first.Order, first.After, first.Before = req.Order, req.After, req.Before
		seen = true
	}
	return first, seen
}

// postByID reads one post for ev: with its first comments in one Query when
// the selection asks for them, otherwise with one Query of its item and
// counter (store.Post). The post and its
// prefetch fit the budget of a post's source (Routes.SourceBudget).
func (h *Handler) postByID(ctx context.Context, ev *appsync.Event, id string) (postResult, error) {
	if first, ok := h.prefetchLimit(ctx, ev, "comments"); ok && !h.noPrefetch {
		p, pre, err := h.store.PostWithComments(ctx, id, first, h.table.sourceBudget("Post"))
		return postResult{Post: p, PrefetchedComments: &pre}, err
	}
	p, err := h.store.Post(ctx, id)
	return postResult{Post: p}, err
}

// postsByID reads the posts with ids for evs, keyed by ID: one BatchGetItem
// per 100, or, where a selection asks for comments, one Query per post read
// concurrently with its first comments. Each post, with what it prefetched,
// takes at most share bytes.
func (h *Handler) postsByID(ctx context.Context, evs []*appsync.Event, ids []string, share int) (map[string]postResult, error) {
	var first store.PageRequest
	prefetch := false
	selections := distinctSelections(evs)
	for _, ev := range selections {
		req, ok := h.prefetchLimit(ctx, ev, "comments")
		if !ok || h.noPrefetch {
			continue
		}
		if prefetch && store.CommentsShape(req) != store.CommentsShape(first) {
			prefetch = false // the events' first pages differ: each child reads its own
			break
		}
		req.Limit = max(req.Limit, first.Limit)
		first, prefetch = req, true
	}
	if !prefetch {
		attrs := []string{} // what the events select of the posts, nil for everything
		for _, ev := range selections {
			a := h.selectedAttributes(ev, "", "authorId", "status")
			if a == nil {
				attrs = nil
				break
			}
			attrs = append(attrs, a...)
		}
		posts, err := h.store.Posts(ctx, ids, attrs...)
		if err != nil {
			return nil, err
		}
		out := make(map[string]postResult, len(posts))
		for id, p := range posts {
			out[id] = postResult{Post: p}
		}
		return out, nil
	}
	distinct := map[string]struct{}{}
	for _, id := range ids {
		if !store.ValidID(id) {
			return nil, errs.E("resolver.posts", errs.Validation, "invalid ID: must be 1-64 characters of A-Z, a-z, 0-9, _ and -")
		}
		distinct[id] = struct{}{}
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		out      = make(map[string]postResult, len(distinct))
		sem      = make(chan struct{}, maxConcurrent)
	)
	branch := together(ctx, len(distinct))
	for id := range distinct {
		sem <- struct{}{}
		ctx := branch()
		wg.Go(func() {
			defer func() { <-sem }()
			p, pre, err := h.store.PostWithComments(ctx, id, first, min(share, h.table.sourceBudget("Post")))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case errs.Is(err, errs.NotFound):
			case err != nil:
				if firstErr == nil {
					firstErr = err
				}
			default:
				out[id] = postResult{Post: p, PrefetchedComments: &pre}
			}
		})
	}
	wg.Wait()
	return out, firstErr
}

// userByID reads one user for ev: with the follows it made in one Query when
// the selection asks for following, otherwise with one Query of its item
// and counter (store.User).
func (h *Handler) userByID(ctx context.Context, ev *appsync.Event, id string) (userResult, error) {
	if first, ok := h.prefetchLimit(ctx, ev, "following"); ok && !h.noPrefetch {
		u, pre, err := h.store.UserWithFollowing(ctx, id, first.Limit, h.table.sourceBudget("User"))
		return userResult{User: u, PrefetchedFollowing: &pre}, err
	}
	u, err := h.store.User(ctx, id)
	return userResult{User: u}, err
}

// wholePrefetch returns Post.comments' page as the source carries it, neither
// decoded nor encoded again, when the comments read with the post are the
// whole connection and fit the page (a first page): the usual case of the
// pattern. Otherwise it declines, and the prefetch is decoded and cut.
func wholePrefetch(ev *appsync.Event, req store.PageRequest) (json.RawMessage, bool) {
	if req.NextToken != "" {
		return nil, false
	}
	// The source was validated with the event (or encoded here): it is read
	// in one pass, the prefetch's items counted as they are skipped.
	src := ev.Source
	var id, parent, items, complete, args []byte
	n := 0
	payload.Walk(src, 0, func(key []byte, i int) int {
		switch payload.FieldOf(key, "id", "prefetchedComments") {
		case "id":
			end, _ := payload.Skip(src, i)
			id = src[i:end]
			return end
		case "prefetchedComments": // a later duplicate replaces it whole
			parent, items, complete, args, n = nil, nil, nil, nil, 0
			return payload.Walk(src, i, func(key []byte, j int) int {
				end, elements := payload.Skip(src, j)
				switch payload.FieldOf(key, "parent", "items", "complete", "args") {
				case "parent":
					parent = src[j:end]
				case "items":
					items, n = src[j:end], elements
				case "complete":
					complete = src[j:end]
				case "args":
					args = src[j:end]
				}
				return end
			})
		}
		end, _ := payload.Skip(src, i)
		return end
	})
	if id == nil || parent == nil || items == nil || items[0] != '[' || string(complete) != "true" || !bytes.Equal(parent, id) {
		return nil, false
	}
	var readWith string // the order and range the prefetch was read in
	if args != nil && json.Unmarshal(args, &readWith) != nil || readWith != store.CommentsShape(req) || n > req.Limit {
		return nil, false
	}
	page := make(json.RawMessage, 0, len(items)+32)
	page = append(append(append(page, `{"items":`...), items...), `,"nextToken":null}`...)
	return page, true
}

// followingFromPrefetch serves User.following from the follows its parent
// read together with the user, when they cover the page asked for.
func (h *Handler) followingFromPrefetch(src userSource, req store.PageRequest) (store.Page[store.Follow], bool) {
	if pre := src.PrefetchedFollowing; pre != nil && pre.Parent == src.ID {
		return h.store.FollowingFromPrefetch(*pre, req)
	}
	return store.Page[store.Follow]{}, false
}
