package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/routes"
	"github.com/example/appsync-dynamo/lambda/selection"
	"github.com/example/appsync-dynamo/lambda/store"
)

// routes maps every routed field (routes.All) to its resolver.
func (h *Handler) routes() map[string]resolveFunc {
	return map[string]resolveFunc{
		"Query.user":  each(h.user),
		"Query.post":  each(h.post),
		"Query.posts": each(h.posts),
		"Query.me":    each(h.me),

		"User.posts":     each(h.userPosts),
		"User.comments":  each(h.userComments),
		"User.following": h.userConnection(h.pages.Following, h.followingFromPrefetch, func(f store.Follow) string { return f.FollowedID }),
		"User.followers": h.userConnection(h.pages.Followers, nil, func(f store.Follow) string { return f.FollowerID }),

		"Post.author":   batchedLookup(func(p postSource) string { return p.AuthorID }, h.reads.Users, showUser, "author not found"),
		"Post.comments": each(h.postComments),

		"Comment.author": batchedLookup(func(c commentSource) string { return c.AuthorID }, h.reads.Users, showUser, "author not found"),
		"Comment.post":   h.commentPosts,

		"Follow.follower": batchedLookup(func(f followSource) string { return f.FollowerID }, h.reads.Users, showUser, "user not found"),
		"Follow.followed": batchedLookup(func(f followSource) string { return f.FollowedID }, h.reads.Users, showUser, "user not found"),

		"Mutation.createUser":    mutation(h.createUser),
		"Mutation.updateUser":    mutation(h.updateUser),
		"Mutation.createPost":    mutation(h.createPost),
		"Mutation.updatePost":    mutation(h.updatePost),
		"Mutation.deletePost":    mutation(h.deletePost),
		"Mutation.publishPost":   mutation(h.publishPost),
		"Mutation.createComment": mutation(h.createComment),
		"Mutation.deleteComment": mutation(h.deleteComment),
		"Mutation.follow":        mutation(h.follow),
		"Mutation.unfollow":      mutation(h.unfollow),
	}
}

// reads is what the read fields need of the table to look items up: by key
// (GetItem), by handle (a Query on GSI1) and many at once (BatchGetItem).
type reads interface {
	User(ctx context.Context, id string) (store.User, error)
	UserByHandle(ctx context.Context, handle string) (store.User, error)
	Users(ctx context.Context, ids []string) (map[string]store.User, error)
	Post(ctx context.Context, id string) (store.Post, error)
	Posts(ctx context.Context, ids []string, attrs ...string) (map[string]store.Post, error)
}

// pages is what the connection fields need of the table: one Query each.
type pages interface {
	PostsByAuthor(ctx context.Context, authorID string, drafts bool, page store.PageRequest) (store.Page[store.Post], error)
	CommentsOnPost(ctx context.Context, postID string, page store.PageRequest) (store.Page[store.Comment], error)
	CommentsByAuthor(ctx context.Context, authorID string, page store.PageRequest) (store.Page[store.Comment], error)
	Following(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
	Followers(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
}

// Parent objects, as far as child resolvers read them from source.
type (
	userSource struct {
		ID                  string                        `json:"id"`
		PrefetchedFollowing *store.Prefetch[store.Follow] `json:"prefetchedFollowing"`
	}
	postSource struct {
		AuthorID string `json:"authorId"`
	}
	// postCommentsSource is a post as Post.comments reads it: with what its
	// resolver prefetched (decoded only by the field that uses it, never by
	// its siblings).
	postCommentsSource struct {
		ID                 string                         `json:"id"`
		PrefetchedComments *store.Prefetch[store.Comment] `json:"prefetchedComments"`
	}
	commentSource struct {
		PostID   string `json:"postId"`
		AuthorID string `json:"authorId"`
	}
	followSource struct {
		FollowerID string `json:"followerId"`
		FollowedID string `json:"followedId"`
	}
)

// commentPosts resolves Comment.post: the posts of the whole batch, read as
// Query.posts reads them (with their comments when the selection asks), each
// within its share of a full batch's reply.
func (h *Handler) commentPosts(ctx context.Context, evs []*appsync.Event) []result {
	route, _ := routes.Find("Comment.post")
	read := func(ctx context.Context, ids []string) (map[string]postResult, error) {
		return h.visiblePosts(ctx, evs, ids, route.ReplyBudget())
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

// visible returns u as the caller may see it: the email only to its owner.
func visible(ev *appsync.Event, u store.User) store.User {
	if ev.Identity.UserID() != u.ID {
		u.Email = nil
	}
	return u
}

func showUser(ev *appsync.Event, u store.User) any { return visible(ev, u) }

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

// user resolves Query.user. By id: one GetItem (AP1), or one Query of the
// user's partition when following is selected (the user and its first
// follows). By handle: one Query on GSI1 (AP2). An absent user is null.
func (h *Handler) user(ctx context.Context, ev *appsync.Event, args userArgs) (any, error) {
	var r userResult
	var err error
	if args.ID != nil {
		r, err = h.userByID(ctx, ev, *args.ID)
	} else {
		r.User, err = h.reads.UserByHandle(ctx, *args.Handle)
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

type postArgs struct {
	ID string `json:"id"`
}

// post resolves Query.post: one GetItem (AP3), or, when comments are
// selected, one Query of the post's partition that also reads its first
// comments, which Post.comments then serves without a request. An absent
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

// MaxPostIDs is the most IDs Query.posts accepts.
const MaxPostIDs = 100

type postsArgs struct {
	IDs []string `json:"ids"`
}

func (a *postsArgs) validate() error {
	if len(a.IDs) > MaxPostIDs {
		return errs.E("Query.posts", errs.Validation, fmt.Sprintf("at most %d ids, got %d", MaxPostIDs, len(a.IDs)))
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

// pageEnvelope is what a page adds to its items: {"items":[],"nextToken":"..."}.
const pageEnvelope = 512

// pageArgs are a connection field's arguments.
type pageArgs struct {
	Limit     *int    `json:"limit"`
	NextToken *string `json:"nextToken"`
	Order     *string `json:"order"`  // SortOrder; nil for the field's default
	After     *string `json:"after"`  // AWSDateTime, exclusive
	Before    *string `json:"before"` // AWSDateTime, exclusive

	attributes    []string // what to read of each item; nil for everything
	order         store.Order
	after, before time.Time
}

func (a *pageArgs) validate() error {
	const op = "resolver.page"
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > store.MaxLimit) {
		return errs.E(op, errs.Validation, fmt.Sprintf("limit must be between 1 and %d", store.MaxLimit))
	}
	if a.Order != nil {
		switch *a.Order {
		case "OLDEST_FIRST":
			a.order = store.OldestFirst
		case "NEWEST_FIRST":
			a.order = store.NewestFirst
		default:
			return errs.E(op, errs.Validation, "order must be NEWEST_FIRST or OLDEST_FIRST")
		}
	}
	var err error
	if a.after, err = dateTime("after", a.After); err != nil {
		return err
	}
	if a.before, err = dateTime("before", a.Before); err != nil {
		return err
	}
	if !a.after.IsZero() && !a.before.IsZero() && !a.after.Before(a.before) {
		return errs.E(op, errs.Validation, "after must be earlier than before")
	}
	return nil
}

// dateTime parses an AWSDateTime argument; nil is the zero time.
func dateTime(name string, v *string) (time.Time, error) {
	if v == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil || t.Before(store.MinTime) || t.After(store.MaxTime) {
		return time.Time{}, errs.E("resolver.page", errs.Validation,
			fmt.Sprintf("%s must be an AWSDateTime (such as 2024-05-01T12:00:00.000Z) after 1970", name))
	}
	return t, nil
}

// request returns the page the arguments ask for, for the field of ev: at
// most the field's share of a batch's reply (routes.Route.ReplyBudget).
func (a pageArgs) request(ev *appsync.Event) store.PageRequest {
	r := store.PageRequest{Limit: store.DefaultLimit, MaxBytes: payload.MaxBytes}
	if route, ok := routes.Of(ev.Info.ParentTypeName, ev.Info.FieldName); ok {
		r.MaxBytes = route.ReplyBudget() - pageEnvelope
	}
	if a.Limit != nil {
		r.Limit = *a.Limit
	}
	if a.NextToken != nil {
		r.NextToken = *a.NextToken
	}
	r.Attributes = a.attributes
	r.Order, r.After, r.Before = a.order, a.after, a.before
	return r
}

// connection resolves a connection field of a parent of type S: it reads the
// parent's ID and fetches one page.
func connection[S, T any](idOf func(S) string, fetch func(context.Context, string, store.PageRequest) (store.Page[T], error)) func(context.Context, *appsync.Event, pageArgs) (any, error) {
	return func(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
		src, err := decodeSource[S](ev)
		if err != nil {
			return nil, err
		}
		return fetch(ctx, idOf(src), args.request(ev))
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

// userPosts resolves User.posts (AP4: one Query on GSI1, published posts by
// publication time, newest first by default; AP4d: the user's drafts, for
// the user alone), reading only the attributes of the posts that the
// selection needs. Someone else's drafts are an empty connection, not an
// error, so that the rest of the page resolves.
func (h *Handler) userPosts(ctx context.Context, ev *appsync.Event, args userPostsArgs) (any, error) {
	args.attributes = itemAttributes(ev, "id", "authorId", "status")
	drafts := args.Status != nil && *args.Status == store.StatusDraft
	return connection(userID, func(ctx context.Context, id string, req store.PageRequest) (store.Page[store.Post], error) {
		if drafts && ev.Identity.UserID() != id {
			return store.Page[store.Post]{Items: []store.Post{}}, nil
		}
		return h.pages.PostsByAuthor(ctx, id, drafts, req)
	})(ctx, ev, args.pageArgs)
}

// userComments resolves User.comments (AP6: one Query on GSI1, newest
// first), reading only the attributes of the comments the selection needs.
func (h *Handler) userComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	args.attributes = itemAttributes(ev, "id", "postId", "authorId")
	return connection(userID, h.pages.CommentsByAuthor)(ctx, ev, args)
}

// postComments resolves Post.comments (AP5: one Query on the post's
// partition, oldest first), or with no request at all when the parent read
// the page together with the post.
func (h *Handler) postComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	req := args.request(ev)
	if page, ok := wholePrefetch(ev, req); ok {
		return page, nil
	}
	src, err := decodeSource[postCommentsSource](ev)
	if err != nil {
		return nil, err
	}
	if pre := src.PrefetchedComments; pre != nil && pre.Parent == src.ID {
		if page, ok := h.prefetch.CommentsFromPrefetch(*pre, req); ok {
			return page, nil
		}
	}
	req.Attributes = itemAttributes(ev, "id", "postId", "authorId")
	return h.pages.CommentsOnPost(ctx, src.ID, req)
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
	appsync.WalkOfValid(src, 0, func(key []byte, i int) int {
		switch appsync.FieldOf(key, "id", "prefetchedComments") {
		case "id":
			end, _ := appsync.SkipValid(src, i)
			id = src[i:end]
			return end
		case "prefetchedComments": // a later duplicate replaces it whole
			parent, items, complete, args, n = nil, nil, nil, nil, 0
			return appsync.WalkOfValid(src, i, func(key []byte, j int) int {
				end, elements := appsync.SkipValid(src, j)
				switch appsync.FieldOf(key, "parent", "items", "complete", "args") {
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
		end, _ := appsync.SkipValid(src, i)
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
		return h.prefetch.FollowingFromPrefetch(*pre, req)
	}
	return store.Page[store.Follow]{}, false
}

// userRef is a user of whom only the ID was selected.
type userRef struct {
	ID string `json:"id"`
}

// userConnection resolves a UserConnection made of follows: User.following
// (AP7: one Query of the user's partition, or none when prefetched) and
// User.followers (AP8: one Query on GSI2). The pages of a batch are read
// concurrently; then the users of every page whose selection reads more than
// their IDs are fetched together, with one BatchGetItem per 100 distinct users
// for the whole batch.
func (h *Handler) userConnection(
	fetch func(context.Context, string, store.PageRequest) (store.Page[store.Follow], error),
	prefetched func(userSource, store.PageRequest) (store.Page[store.Follow], bool),
	other func(store.Follow) string,
) resolveFunc {
	pages := each(func(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
		src, err := decodeSource[userSource](ev)
		if err != nil {
			return nil, err
		}
		if prefetched != nil {
			if page, ok := prefetched(src, args.request(ev)); ok {
				return page, nil
			}
		}
		return fetch(ctx, src.ID, args.request(ev))
	})
	return func(ctx context.Context, evs []*appsync.Event) []result {
		out := pages(ctx, evs)
		var ids []string
		needs := map[string]bool{} // by selection: the events of a batch mostly share one
		for _, ev := range distinctSelections(evs) {
			needs[selectionKey(ev)] = needsUserItems(ev)
		}
		need := make([]bool, len(evs))
		for i, r := range out {
			if need[i] = needs[selectionKey(evs[i])]; r.err == nil && need[i] {
				for _, f := range r.data.(store.Page[store.Follow]).Items {
					ids = append(ids, other(f))
				}
			}
		}
		var users map[string]store.User
		var err error
		if len(ids) > 0 {
			users, err = h.reads.Users(ctx, ids)
		}
		for i, r := range out {
			if r.err != nil {
				continue
			}
			if !need[i] {
				out[i] = result{data: userRefs(r.data.(store.Page[store.Follow]), other)}
				continue
			}
			if err != nil {
				out[i] = result{err: err}
				continue
			}
			conn, cerr := usersPage(evs[i], r.data.(store.Page[store.Follow]), users, other)
			out[i] = result{data: conn, err: cerr}
		}
		return out
	}
}

// userRefs is a page of follows as the users on their other side, of whom only
// the IDs are selected.
func userRefs(page store.Page[store.Follow], other func(store.Follow) string) store.Page[any] {
	conn := store.Page[any]{Items: make([]any, len(page.Items)), NextToken: page.NextToken}
	for i, f := range page.Items {
		conn.Items[i] = userRef{ID: other(f)}
	}
	return conn
}

// usersPage is a page of follows as the users on their other side, read in
// users. A profile deleted since is left out. Users are larger than follows,
// so the page is cut again (with a nextToken) where the users it holds would
// exceed the field's share of the reply.
func usersPage(ev *appsync.Event, page store.Page[store.Follow], users map[string]store.User, other func(store.Follow) string) (store.Page[any], error) {
	budget := pageArgs{}.request(ev).MaxBytes
	conn := store.Page[any]{Items: make([]any, 0, len(page.Items)), NextToken: page.NextToken}
	size := 0
	for i, f := range page.Items {
		u, ok := users[other(f)]
		if !ok {
			continue
		}
		item := visible(ev, u)
		s := payload.Size(item) + 1
		if len(conn.Items) > 0 && size+s > budget {
			cut, err := page.Cut(i)
			if err != nil {
				return store.Page[any]{}, err
			}
			conn.NextToken = cut.NextToken
			break
		}
		size += s
		conn.Items = append(conn.Items, item)
	}
	return conn, nil
}

// itemAttributes returns the attributes a connection's selection reads of
// its items, plus required (what child resolvers need on their source), or
// nil (read everything) when the selection cannot be read in full.
func itemAttributes(ev *appsync.Event, required ...string) []string {
	return selectedAttributes(ev, "items", required...)
}

// selectedAttributes returns the names of the fields selected under the
// field named under ("" for the field's own selection), plus required, or
// nil when the selection cannot be read in full (a named fragment spread).
// Names that are not attributes (author, comments) are harmless in a
// projection.
func selectedAttributes(ev *appsync.Event, under string, required ...string) []string {
	set, err := selection.Parse(ev.Info.SelectionSetGraphQL, ev.Info.FieldName, ev.Info.Variables)
	if err != nil || set.Opaque || ev.Info.SelectionSetGraphQL == "" {
		return nil
	}
	attrs := append([]string(nil), required...)
	levels := []selection.Set{set}
	if under != "" {
		levels = nil
		for _, f := range set.Named(under) {
			levels = append(levels, f.Set)
		}
	}
	for _, level := range levels {
		if level.Opaque {
			return nil
		}
		for _, f := range level.Fields {
			attrs = append(attrs, f.Name)
		}
	}
	return attrs
}

// needsUserItems reports whether a UserConnection's selection reads more of
// its users than their IDs. It reads field names from selectionSetGraphQL
// (selectionSetList shows aliases in their place: "id: handle" is not the
// ID); when the selection cannot be read in full, it answers true.
func needsUserItems(ev *appsync.Event) bool {
	attrs := selectedAttributes(ev, "items")
	if attrs == nil {
		return true
	}
	for _, f := range attrs {
		if f != "id" && f != "__typename" {
			return true
		}
	}
	return false
}
