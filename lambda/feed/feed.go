// Package feed is the feed feature: Query.feed, the published posts of the
// users the caller follows, newest first, with hybrid fan-out. Its entries
// are written from the table's stream by its Projection (project.go, which
// the projector applies), and read, with the posts of the high-follower
// authors the caller follows, by Table.Feed (read.go; docs/table.md, "The
// feed"). Its items and keys are its own (table.go, pull.go, keys.go); the
// posts, follows and counts it reads are the core's, through the store.
//
// Wired in by resolver.WithFeature(feed.Feature(feed.NewTable(s))) in
// lambda/cmd/resolver and feed.NewProjection(s) in lambda/cmd/projector, its
// SDL, Routes and projection's filters and role in the stack
// (infra/apistack/features.go) and the local tools (local/wired);
// docs/layout.md says how to leave it out.
package feed

import (
	"context"
	_ "embed"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// SDL is the feature's part of the schema (schema.graphql): Query.feed,
// merged into the core's where the feature is wired in.
//
//go:embed schema.graphql
var SDL string

// Routes are the feature's routed fields: Query.feed, a connection of posts.
var Routes = []resolver.Route{
	{Type: "Query", Field: "feed", Returns: "Post", Shape: resolver.Connection},
}

// Reader is what the feature reads of the table: a page of a reader's feed.
type Reader interface {
	Feed(ctx context.Context, readerID string, page store.PageRequest) (store.Page[store.Post], error)
}

// Feature is the feature's part of the Lambda: Query.feed, the caller's
// feed read from r, reading of each post only what the selection needs
// (and what tells whether it still belongs: its ID, author and status).
func Feature(r Reader) resolver.Feature {
	return resolver.Feature{Routes: Routes, Fields: map[string]resolver.Field{
		"Query.feed": resolver.CallersPage(r.Feed, "id", "authorId", "status"),
	}}
}
