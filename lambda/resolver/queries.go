package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// commentPosts resolves Comment.post: the posts of the whole batch, read as
// Query.posts reads them (with their comments when the selection asks), each
// within its share of a full batch's reply.
func (h *Handler) commentPosts(ctx context.Context, evs []*appsync.Event) []Result {
	route, _ := routeOf(ctx)
	read := func(ctx context.Context, _ []*appsync.Event, ids []string) (map[string]postResult, error) {
		return h.visiblePosts(ctx, evs, ids, route.replyBudget())
	}
	return batchedLookup(func(c commentSource) string { return c.PostID }, read, showPost, "post not found")(ctx, evs)
}

// visiblePosts is postsByID without the posts the caller of evs (one
// GraphQL request's) may not see: someone else's drafts, as if absent.
func (h *Handler) visiblePosts(ctx context.Context, evs []*appsync.Event, ids []string, share int) (map[string]postResult, error) {
	found, err := h.postsByID(ctx, evs, ids, share)
	caller := evs[0].Identity.UserID()
	for id, p := range found {
		if !p.VisibleTo(caller) {
			delete(found, id)
		}
	}
	return found, err
}

func showPost(_ *appsync.Event, p postResult) any { return p }

// userArgs are Query.user's arguments: exactly one of id and handle.
type userArgs struct {
	ID     *string `json:"id"`
	Handle *string `json:"handle"`
}

func (a *userArgs) validate() error {
	if (a.ID == nil) == (a.Handle == nil) {
		return errs.E("Query.user", errs.Validation, "give exactly one of id and handle")
	}
	return nil
}

// user resolves Query.user. By id: one Query of its item and counter
// (AP1), or, when following is selected, one Query of the user's partition
// that also reads its first follows. By handle: one Query on GSI1 (AP2). An absent user is null.
func (h *Handler) user(ctx context.Context, ev *appsync.Event, args userArgs) (any, error) {
	var r userResult
	var err error
	if args.ID != nil {
		r, err = h.userByID(ctx, ev, *args.ID)
	} else {
		r.User, err = h.store.UserByHandle(ctx, *args.Handle)
	}
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r.User = visible(ev, r.User)
	return r, nil
}

// me resolves Query.me: the caller's own profile, null before createUser.
func (h *Handler) me(ctx context.Context, ev *appsync.Event, _ noArgs) (any, error) {
	id := ev.Identity.UserID()
	if id == "" {
		return nil, errs.E("Query.me", errs.Unauthorized, "Query.me needs a signed-in user")
	}
	r, err := h.userByID(ctx, ev, id)
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// post resolves Query.post: one Query of its item and counter (AP3), or, when
// comments are selected, of its partition with its first comments. An absent
// post, and someone else's draft, is null.
func (h *Handler) post(ctx context.Context, ev *appsync.Event, args postArgs) (any, error) {
	p, err := h.postByID(ctx, ev, args.ID)
	if errs.Is(err, errs.NotFound) || (err == nil && !p.VisibleTo(ev.Identity.UserID())) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// maxPostIDs is the most IDs Query.posts accepts.
const maxPostIDs = 100

type postsArgs struct {
	IDs []string `json:"ids"`
}

func (a *postsArgs) validate() error {
	if len(a.IDs) > maxPostIDs {
		return errs.E("Query.posts", errs.Validation, fmt.Sprintf("at most %d ids, got %d", maxPostIDs, len(a.IDs)))
	}
	return nil
}

// posts resolves Query.posts (AP10: one BatchGetItem per 100 distinct IDs,
// or one Query per post when comments are selected): the posts in the order
// of ids, null where a post is absent or someone else's draft.
func (h *Handler) posts(ctx context.Context, ev *appsync.Event, args postsArgs) (any, error) {
	found, err := h.visiblePosts(ctx, []*appsync.Event{ev}, args.IDs, payload.MaxBytes/max(len(args.IDs), 1))
	if err != nil {
		return nil, err
	}
	out := make([]*postResult, len(args.IDs))
	for i, id := range args.IDs {
		if p, ok := found[id]; ok {
			out[i] = &p
		}
	}
	return out, nil
}

// connection resolves a connection field of a parent of type S: it reads the
// parent's ID and fetches one page.
func connection[S, T any](idOf func(S) string, fetch func(context.Context, string, store.PageRequest) (store.Page[T], error)) func(context.Context, *appsync.Event, pageArgs) (any, error) {
	return func(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
		src, err := decodeSource[S](ev)
		if err != nil {
			return nil, err
		}
		return fetch(ctx, idOf(src), args.request(ctx))
	}
}

func userID(u userSource) string { return u.ID }

// userPostsArgs are User.posts' arguments: a page, and which posts.
type userPostsArgs struct {
	pageArgs
	Status *string `json:"status"` // PostStatus; nil for PUBLISHED
}

func (a *userPostsArgs) validate() error {
	if s := a.Status; s != nil && *s != store.StatusDraft && *s != store.StatusPublished {
		return errs.E("User.posts", errs.Validation, "status must be DRAFT or PUBLISHED")
	}
	return a.pageArgs.validate()
}

// userPosts resolves User.posts (AP4: one Query on GSI1, published posts,
// newest first by default; AP4d: the user's drafts, for the user alone),
// reading what the selection needs. Someone else's drafts are empty.
func (h *Handler) userPosts(ctx context.Context, ev *appsync.Event, args userPostsArgs) (any, error) {
	args.attributes = h.itemAttributes(ev, "id", "authorId", "status")
	drafts := args.Status != nil && *args.Status == store.StatusDraft
	return connection(userID, func(ctx context.Context, id string, req store.PageRequest) (store.Page[store.Post], error) {
		if drafts && ev.Identity.UserID() != id {
			return store.Page[store.Post]{Items: []store.Post{}}, nil
		}
		return h.store.PostsByAuthor(ctx, id, drafts, req)
	})(ctx, ev, args.pageArgs)
}

// userComments resolves User.comments (AP6: one Query on GSI1, newest
// first). A comment whose post is deleted but not yet swept is left out when
// the selection may select the post (store.PostsExist, one more request).
func (h *Handler) userComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	args.attributes = h.itemAttributes(ev, "id", "postId", "authorId")
	page, err := connection(userID, h.store.CommentsByAuthor)(ctx, ev, args)
	if err != nil || args.attributes != nil && !slices.Contains(args.attributes, "post") {
		return page, err
	}
	comments := page.(store.Page[store.Comment])
	ids := make([]string, len(comments.Items))
	for i, c := range comments.Items {
		ids[i] = c.PostID
	}
	exist, err := h.store.PostsExist(ctx, ids)
	if err != nil {
		return nil, err
	}
	comments.Items = slices.DeleteFunc(slices.Clone(comments.Items), func(c store.Comment) bool { return !exist[c.PostID] })
	return comments, nil
}

// postComments resolves Post.comments (AP5: one Query on the post's
// partition, oldest first), or with no request at all when the parent read
// the page together with the post.
func (h *Handler) postComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	req := args.request(ctx)
	if page, ok := wholePrefetch(ev, req); ok {
		return page, nil
	}
	src, err := decodeSource[postCommentsSource](ev)
	if err != nil {
		return nil, err
	}
	if pre := src.PrefetchedComments; pre != nil && pre.Parent == src.ID {
		if page, ok := h.store.CommentsFromPrefetch(*pre, req); ok {
			return page, nil
		}
	}
	req.Attributes = h.itemAttributes(ev, "id", "postId", "authorId")
	return h.store.CommentsOnPost(ctx, src.ID, req)
}

// postLikes resolves Post.likes: one Query of the post's partition under
// LIKE#, newest first.
func (h *Handler) postLikes(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return connection(func(p postIDSource) string { return p.ID }, h.store.Likes)(ctx, ev, args)
}

// likedByMe resolves Post.likedByMe for a batch of posts: one BatchGetItem
// of the caller's guards of those posts per 100 (store.LikedBy), whatever
// the batch's size; false with no request for a caller without a user (an
// API key).
func (h *Handler) likedByMe(ctx context.Context, evs []*appsync.Event) []Result {
	out := make([]Result, len(evs))
	ids := make([]string, len(evs))
	byCaller := map[string][]string{} // one GraphQL request's batch: one caller
	for i, ev := range evs {
		src, err := decodeSource[postIDSource](ev)
		switch {
		case err != nil:
			out[i] = Result{Err: err}
		case !store.ValidID(src.ID):
			out[i] = Result{Err: errs.E("Post.likedByMe", errs.Validation, "invalid ID on the parent object")}
		default:
			ids[i] = src.ID
			if c := ev.Identity.UserID(); c != "" {
				byCaller[c] = append(byCaller[c], src.ID)
			}
		}
	}
	liked := make(map[string]map[string]bool, len(byCaller))
	failed := make(map[string]error)
	for c, posts := range byCaller {
		if liked[c], failed[c] = h.store.LikedBy(ctx, c, posts); failed[c] == nil {
			delete(failed, c)
		}
	}
	for i, ev := range evs {
		if out[i].Err != nil {
			continue
		}
		c := ev.Identity.UserID()
		if err := failed[c]; err != nil {
			out[i] = Result{Err: err}
			continue
		}
		out[i] = Result{Data: c != "" && liked[c][ids[i]]}
	}
	return out
}

// CallersPage makes the Field of a feature's connection served to its
// signed-in caller (an API key is Unauthorized): read gets the caller's ID
// and the checked page, its attributes what the selection needs plus
// required, its bytes the reply's budget.
func CallersPage[T any](read func(ctx context.Context, callerID string, page store.PageRequest) (T, error), required ...string) Field {
	return Each(func(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
		callerID, err := caller(ev)
		if err != nil {
			return nil, err
		}
		if h := handlerOf(ctx); h != nil {
			args.attributes = h.itemAttributes(ev, required...)
		}
		return read(ctx, callerID, args.request(ctx))
	})
}

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
