// Package live is the live-updates feature: who may subscribe to what. The
// core's Subscription.onCreateComment(postId) and the feature's
// Subscription.onPostActivity(id) are routed to the Lambda through
// appsyncjs/root.js, which AppSync runs as a subscription starts: the
// Lambda answers whether the caller may read the post (as Query.post does:
// an absent post and someone else's draft alike are not), and the resolver
// then refuses the subscription or sets its enhanced and invalidation
// filters to its arguments.
//
// Wired in by resolver.WithFeature(live.Feature(s)) in lambda/cmd/resolver,
// its SDL and Routes in the stack (infra/apistack/features.go) and the
// local tools (local/wired); docs/layout.md says how to leave it out.
package live

import (
	"context"
	_ "embed"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// SDL is the feature's part of the schema (schema.graphql):
// Subscription.onPostActivity, merged into the core's where the feature is
// wired in.
//
//go:embed schema.graphql
var SDL string

// Routes are the subscription fields the Lambda authorizes (the core's
// onCreateComment, the feature's onPostActivity and onFeed), the mutation
// that ends a deleted post's subscriptions, and the one that pushes a post
// to its readers' feeds.
var Routes = []resolver.Route{
	{Type: "Subscription", Field: "onCreateComment", Returns: "Comment"},
	{Type: "Subscription", Field: "onPostActivity", Returns: "Post"},
	{Type: "Subscription", Field: "onFeed", Returns: "FeedPush", Member: "post"},
	{Type: "Mutation", Field: "invalidatePost", Returns: "ID", Invalidates: true},
	{Type: "Mutation", Field: "pushFeed", Returns: "FeedPush", Member: "post"},
}

// subscribers are the subscription fields to a post, each with the payload
// its subscriptions' invalidation filter matches (their arguments: see
// appsyncjs/root.js).
var subscribers = map[string]func(postID string) map[string]any{
	"onCreateComment": func(id string) map[string]any { return map[string]any{"postId": id} },
	"onPostActivity":  func(id string) map[string]any { return map[string]any{"id": id} },
}

// Posts is what the feature reads of the table: a post, to tell whether the
// caller may read it.
type Posts interface {
	Post(ctx context.Context, id string) (store.Post, error)
}

// Feature is the feature's part of the Lambda, over s's table: each
// subscription field answers, for a caller who may follow what it names,
// its subscribers' filter ({"postId": {"eq": id}} for a post's comments,
// {"id": {"eq": id}} for its activity, {"readers": {"contains": caller}}
// for a feed), and null for anyone else; Mutation.pushFeed answers a
// chunk of a post's publication to its readers (feed.go).
func Feature(s *store.Store) resolver.Feature {
	var posts Posts = s
	pushes := NewPushes(s)
	return resolver.Feature{Routes: Routes, Fields: map[string]resolver.Field{
		"Subscription.onFeed": resolver.Each(func(_ context.Context, ev *appsync.Event, _ struct{}) (any, error) {
			return onFeed(ev)
		}),
		"Mutation.pushFeed": resolver.Each(func(ctx context.Context, _ *appsync.Event, args pushArgs) (any, error) {
			return pushes.Push(ctx, args.PostID, args.After, args.Readers)
		}),
		"Subscription.onCreateComment": resolver.Each(func(ctx context.Context, ev *appsync.Event, args struct {
			PostID string `json:"postId"`
		}) (any, error) {
			return readable(ctx, posts, ev, args.PostID, "postId")
		}),
		"Subscription.onPostActivity": resolver.Each(func(ctx context.Context, ev *appsync.Event, args struct {
			ID string `json:"id"`
		}) (any, error) {
			return readable(ctx, posts, ev, args.ID, "id")
		}),
		"Mutation.invalidatePost": resolver.Each(func(ctx context.Context, ev *appsync.Event, args struct {
			ID           string `json:"id"`
			Subscription string `json:"subscription"`
		}) (any, error) {
			return invalidation(ctx, posts, args.ID, args.Subscription)
		}),
	}}
}

// invalidation is Mutation.invalidatePost's answer to appsyncjs/root.js:
// the post's ID, and the subscriptions to end, when the post is gone; a
// post that exists keeps its subscribers (Conflict).
func invalidation(ctx context.Context, posts Posts, id, field string) (any, error) {
	const op = "Mutation.invalidatePost"
	payload, ok := subscribers[field]
	switch {
	case !store.ValidID(id):
		return nil, errs.E(op, errs.Validation, "invalid post id")
	case !ok:
		return nil, errs.E(op, errs.Validation, "subscription is onCreateComment or onPostActivity, not "+field)
	}
	_, err := posts.Post(ctx, id)
	switch {
	case err == nil:
		return nil, errs.E(op, errs.Conflict, "the post exists: only a deleted post's subscriptions end")
	case !errs.Is(err, errs.NotFound):
		return nil, err
	}
	return map[string]any{"value": id, "invalidations": []any{
		map[string]any{"subscriptionField": field, "payload": payload(id)},
	}}, nil
}

// readable is the filter {member: {"eq": id}} when the caller may read post
// id, and nil when it is absent or someone else's draft.
func readable(ctx context.Context, posts Posts, ev *appsync.Event, id, member string) (any, error) {
	if !store.ValidID(id) {
		return nil, errs.E(ev.Info.Field(), errs.Validation, "invalid post id")
	}
	p, err := posts.Post(ctx, id)
	switch {
	case errs.Is(err, errs.NotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !p.VisibleTo(ev.Identity.UserID()):
		return nil, nil
	}
	return map[string]any{member: map[string]string{"eq": id}}, nil
}
