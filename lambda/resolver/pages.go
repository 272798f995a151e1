package resolver

// Connection fields: their paging arguments (limit, nextToken, order, a
// time range, a status) and the one Query each reads a page with.

import (
	"context"
	"slices"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

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
