// Package wired is the optional features the local tools serve, a line
// each, as lambda/cmd/resolver and the stack (infra/apistack/features.go)
// wire them: make dev's server, the local AppSync's tests, the benchmarks
// and the naive layout take them from here. Leaving a feature out deletes
// its lines here (marked with its name) with its folder (docs/layout.md).
package wired

import (
	"slices"

	"github.com/example/appsync-dynamo/lambda/feed"    // feature: feed
	"github.com/example/appsync-dynamo/lambda/hotkeys" // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/hotpage" // feature: hotpage
	"github.com/example/appsync-dynamo/lambda/live"    // feature: live
	"github.com/example/appsync-dynamo/lambda/probe"   // feature: probe
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending" // feature: trending
)

// SDL are the features' parts of the schema, for schema.Load.
var SDL = []string{
	feed.SDL,     // feature: feed
	trending.SDL, // feature: trending
	live.SDL,     // feature: live
}

// Routes are the features' routed fields (the core's are resolver.CoreRoutes).
var Routes = slices.Concat[[]resolver.Route](
	feed.Routes,     // feature: feed
	trending.Routes, // feature: trending
	live.Routes,     // feature: live
)

// Store are the features' options of every store the local tools make.
var Store = []store.Option{
	hotkeys.Spread, // feature: hotkeys
}

// Options wire the features into a resolver reading s.
func Options(s *store.Store) []resolver.Option {
	return []resolver.Option{
		resolver.WithFeature(feed.Feature(feed.NewTable(s))),           // feature: feed
		resolver.WithFeature(trending.Feature(trending.NewBuckets(s))), // feature: trending
		resolver.WithFeature(hotpage.Feature(s)),                       // feature: hotpage
		resolver.WithFeature(live.Feature(s)),                          // feature: live
		resolver.WithFeature(probe.Feature()),                          // feature: probe
	}
}
