package resolver

// The root fields (Query.user, me, post, posts) and the post lookups that
// Comment.post shares with them, each hiding what the caller may not see.

import (
	"context"
	"fmt"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
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
