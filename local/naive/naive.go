// Package naive is the baseline the project is measured against: a Lambda
// handler that resolves every field on its own, as a first GraphQL-on-DynamoDB
// resolver layout usually does. No batching (its routes have batch size 0),
// no prefetch, no short-circuit, one GetItem per author, per post, per user.
// It reads the same table through the same store, so the comparison is of
// the resolver layout alone. It is used by `make bench`, never deployed.
package naive

import (
	"context"
	"encoding/json"
	"slices"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/wired"
)

// Routes is the routes served (the core's and the features') with
// batching turned off.
func Routes() []resolver.Route {
	rs := slices.Concat(resolver.CoreRoutes, wired.Routes)
	for i := range rs {
		rs[i].MaxBatchSize = 0
	}
	return rs
}

// Handler resolves one event per invocation.
type Handler struct{ s *store.Store }

// New returns the naive handler over s.
func New(s *store.Store) *Handler { return &Handler{s: s} }

type source struct {
	ID         string `json:"id"`
	AuthorID   string `json:"authorId"`
	PostID     string `json:"postId"`
	FollowerID string `json:"followerId"`
	FollowedID string `json:"followedId"`
}

type args struct {
	ID        *string  `json:"id"`
	Handle    *string  `json:"handle"`
	IDs       []string `json:"ids"`
	Limit     *int     `json:"limit"`
	NextToken *string  `json:"nextToken"`
	Order     *string  `json:"order"` // the bench's orders; ranges and drafts are not the baseline's
}

func (a args) page() store.PageRequest {
	p := store.PageRequest{Limit: store.DefaultLimit}
	if a.Limit != nil {
		p.Limit = *a.Limit
	}
	if a.NextToken != nil {
		p.NextToken = *a.NextToken
	}
	if a.Order != nil {
		p.Order = map[string]store.Order{"NEWEST_FIRST": store.NewestFirst, "OLDEST_FIRST": store.OldestFirst}[*a.Order]
	}
	return p
}

// Invoke resolves a single event.
func (h *Handler) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	evs, _, err := appsync.Decode(payload)
	if err != nil || len(evs) != 1 {
		return nil, messages.InvokeResponse_Error{Type: "ValidationError", Message: "one event per invocation"}
	}
	ev := evs[0]
	var a args
	var src source
	json.Unmarshal(ev.Arguments, &a)
	json.Unmarshal(ev.Source, &src)
	data, err := h.resolve(ctx, ev.Info.Field(), a, src, ev.Identity.UserID())
	if errs.Is(err, errs.NotFound) && ev.Info.ParentTypeName == "Query" {
		data, err = nil, nil
	}
	if err != nil {
		return nil, messages.InvokeResponse_Error{Type: errs.KindOf(err).String(), Message: errs.PublicMessage(err)}
	}
	return json.Marshal(data)
}

func (h *Handler) resolve(ctx context.Context, field string, a args, src source, caller string) (any, error) {
	switch field {
	case "Query.feed": // the feed's own read; each post's author is its own invocation, as every child
		if caller == "" {
			return nil, errs.E("naive", errs.Unauthorized, "the feed needs a signed-in user")
		}
		return feed.NewTable(h.s).Feed(ctx, caller, a.page())
	case "Query.user":
		if a.Handle != nil {
			return h.s.UserByHandle(ctx, *a.Handle)
		}
		return h.s.User(ctx, deref(a.ID))
	case "Query.post":
		return h.s.Post(ctx, deref(a.ID))
	case "Query.posts":
		out := make([]*store.Post, len(a.IDs))
		for i, id := range a.IDs { // one GetItem per post
			if p, err := h.s.Post(ctx, id); err == nil {
				out[i] = &p
			} else if !errs.Is(err, errs.NotFound) {
				return nil, err
			}
		}
		return out, nil
	case "User.posts":
		return h.s.PostsByAuthor(ctx, src.ID, false, a.page())
	case "User.comments":
		return h.s.CommentsByAuthor(ctx, src.ID, a.page())
	case "Post.comments":
		return h.s.CommentsOnPost(ctx, src.ID, a.page())
	case "User.following", "User.followers":
		fetch, other := h.s.Following, func(f store.Follow) string { return f.FollowedID }
		if field == "User.followers" {
			fetch, other = h.s.Followers, func(f store.Follow) string { return f.FollowerID }
		}
		page, err := fetch(ctx, src.ID, a.page())
		if err != nil {
			return nil, err
		}
		users := store.Page[store.User]{Items: []store.User{}, NextToken: page.NextToken}
		for _, f := range page.Items { // one GetItem per user
			u, err := h.s.User(ctx, other(f))
			if err != nil {
				return nil, err
			}
			users.Items = append(users.Items, u)
		}
		return users, nil
	case "Post.author", "Comment.author":
		return h.s.User(ctx, src.AuthorID)
	case "Comment.post":
		return h.s.Post(ctx, src.PostID)
	case "Follow.follower":
		return h.s.User(ctx, src.FollowerID)
	case "Follow.followed":
		return h.s.User(ctx, src.FollowedID)
	case "Query.me":
		return nil, errs.E("naive", errs.Unauthorized, "not supported by the baseline")
	}
	return nil, errs.E("naive", errs.Validation, "the baseline resolves reads only: "+field)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
