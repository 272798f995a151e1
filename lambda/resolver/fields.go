package resolver

import (
	"context"
	"fmt"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// routes maps every routed field (routes.All) to its resolver.
func (h *Handler) routes() map[string]resolveFunc {
	return map[string]resolveFunc{
		"Query.user":  one(h.user),
		"Query.post":  one(h.post),
		"Query.posts": one(h.posts),
		"Query.me":    one(h.me),

		"User.posts":     one(h.userPosts),
		"User.comments":  one(h.userComments),
		"User.following": one(h.following),
		"User.followers": one(h.followers),

		"Post.author":   lookup(func(p parentPost) string { return p.AuthorID }, h.store.Users, h.showUser, "author not found"),
		"Post.comments": one(h.postComments),

		"Comment.author": lookup(func(c parentComment) string { return c.AuthorID }, h.store.Users, h.showUser, "author not found"),
		"Comment.post":   lookup(func(c parentComment) string { return c.PostID }, h.store.Posts, showPost, "post not found"),

		"Follow.follower": lookup(func(f parentFollow) string { return f.FollowerID }, h.store.Users, h.showUser, "user not found"),
		"Follow.followed": lookup(func(f parentFollow) string { return f.FollowedID }, h.store.Users, h.showUser, "user not found"),

		"Mutation.createUser":    mutation(h.createUser),
		"Mutation.updateUser":    mutation(h.updateUser),
		"Mutation.createPost":    mutation(h.createPost),
		"Mutation.updatePost":    mutation(h.updatePost),
		"Mutation.deletePost":    mutation(h.deletePost),
		"Mutation.createComment": mutation(h.createComment),
		"Mutation.deleteComment": mutation(h.deleteComment),
		"Mutation.follow":        mutation(h.follow),
		"Mutation.unfollow":      mutation(h.unfollow),
	}
}

// Parent objects, as far as child resolvers read them from source.
type (
	parentUser struct {
		ID string `json:"id"`
	}
	parentPost struct {
		ID       string `json:"id"`
		AuthorID string `json:"authorId"`
	}
	parentComment struct {
		PostID   string `json:"postId"`
		AuthorID string `json:"authorId"`
	}
	parentFollow struct {
		FollowerID string `json:"followerId"`
		FollowedID string `json:"followedId"`
	}
)

// showUser returns u as the caller may see it: the email only to its owner.
func (h *Handler) showUser(ev *appsync.Event, u store.User) any {
	if ev.Identity.UserID() != u.ID {
		u.Email = nil
	}
	return u
}

func showPost(_ *appsync.Event, p store.Post) any { return p }

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

// user resolves Query.user (AP1 by id: GetItem; AP2 by handle: Query on
// GSI1). An absent user is null.
func (h *Handler) user(ctx context.Context, ev *appsync.Event, args userArgs) (any, error) {
	var u store.User
	var err error
	if args.ID != nil {
		u, err = h.store.User(ctx, *args.ID)
	} else {
		u, err = h.store.UserByHandle(ctx, *args.Handle)
	}
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return h.showUser(ev, u), nil
}

// me resolves Query.me: the caller's own profile, null before createUser.
func (h *Handler) me(ctx context.Context, ev *appsync.Event, _ noArgs) (any, error) {
	id := ev.Identity.UserID()
	if id == "" {
		return nil, errs.E("Query.me", errs.Unauthorized, "Query.me needs a signed-in user")
	}
	u, err := h.store.User(ctx, id)
	if errs.Is(err, errs.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return u, nil
}

type postArgs struct {
	ID string `json:"id"`
}

// post resolves Query.post (AP3: GetItem). An absent post is null.
func (h *Handler) post(ctx context.Context, _ *appsync.Event, args postArgs) (any, error) {
	p, err := h.store.Post(ctx, args.ID)
	if errs.Is(err, errs.NotFound) {
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

// posts resolves Query.posts (AP10: one BatchGetItem per 100 distinct IDs):
// the posts in the order of ids, null where a post is absent.
func (h *Handler) posts(ctx context.Context, _ *appsync.Event, args postsArgs) (any, error) {
	found, err := h.store.Posts(ctx, args.IDs)
	if err != nil {
		return nil, err
	}
	out := make([]*store.Post, len(args.IDs))
	for i, id := range args.IDs {
		if p, ok := found[id]; ok {
			out[i] = &p
		}
	}
	return out, nil
}

// pageArgs are a connection field's arguments.
type pageArgs struct {
	Limit     *int    `json:"limit"`
	NextToken *string `json:"nextToken"`
}

func (a *pageArgs) validate() error {
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > store.MaxLimit) {
		return errs.E("resolver.page", errs.Validation, fmt.Sprintf("limit must be between 1 and %d", store.MaxLimit))
	}
	return nil
}

func (a pageArgs) request() store.PageRequest {
	r := store.PageRequest{Limit: store.DefaultLimit}
	if a.Limit != nil {
		r.Limit = *a.Limit
	}
	if a.NextToken != nil {
		r.NextToken = *a.NextToken
	}
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
		return fetch(ctx, idOf(src), args.request())
	}
}

func userID(u parentUser) string { return u.ID }

// userPosts resolves User.posts (AP4: one Query on GSI1, newest first).
func (h *Handler) userPosts(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return connection(userID, h.store.PostsByAuthor)(ctx, ev, args)
}

// userComments resolves User.comments (AP6: one Query on GSI1, newest first).
func (h *Handler) userComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return connection(userID, h.store.CommentsByAuthor)(ctx, ev, args)
}

// postComments resolves Post.comments (AP5: one Query on the post's
// partition, oldest first).
func (h *Handler) postComments(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return connection(func(p parentPost) string { return p.ID }, h.store.CommentsOnPost)(ctx, ev, args)
}

// following resolves User.following (AP7: one Query on the user's
// partition, then one BatchGetItem for the users when more than their IDs is
// selected).
func (h *Handler) following(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return h.followUsers(ctx, ev, args, h.store.Following, func(f store.Follow) string { return f.FollowedID })
}

// followers resolves User.followers (AP8: one Query on GSI2, then one
// BatchGetItem for the users when more than their IDs is selected).
func (h *Handler) followers(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
	return h.followUsers(ctx, ev, args, h.store.Followers, func(f store.Follow) string { return f.FollowerID })
}

// userRef is a user of whom only the ID was selected.
type userRef struct {
	ID string `json:"id"`
}

func (h *Handler) followUsers(ctx context.Context, ev *appsync.Event, args pageArgs,
	fetch func(context.Context, string, store.PageRequest) (store.Page[store.Follow], error), other func(store.Follow) string) (any, error) {
	src, err := decodeSource[parentUser](ev)
	if err != nil {
		return nil, err
	}
	page, err := fetch(ctx, src.ID, args.request())
	if err != nil {
		return nil, err
	}
	out := store.Page[any]{Items: make([]any, 0, len(page.Items)), NextToken: page.NextToken}
	ids := make([]string, len(page.Items))
	for i, f := range page.Items {
		ids[i] = other(f)
	}
	if !needsUserItems(&ev.Info) {
		for _, id := range ids {
			out.Items = append(out.Items, userRef{ID: id})
		}
		return out, nil
	}
	users, err := h.store.Users(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		if u, ok := users[id]; ok { // a profile deleted since is left out
			out.Items = append(out.Items, h.showUser(ev, u))
		}
	}
	return out, nil
}

// needsUserItems reports whether a UserConnection's selection reads more of
// its users than their IDs.
func needsUserItems(info *appsync.Info) bool {
	for _, f := range info.Children("items") {
		if f != "id" && f != "__typename" {
			return true
		}
	}
	return false
}
