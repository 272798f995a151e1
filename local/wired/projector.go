package wired // feature: projector

import (
	"log/slog"
	"slices"

	"github.com/example/appsync-dynamo/lambda/feed"    // feature: feed
	"github.com/example/appsync-dynamo/lambda/hotkeys" // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/live"    // feature: live
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Projector is the projector of s's stream, logging to log: the features'
// batch steps, then their projections and more (those that call the API,
// which the caller makes).
func Projector(s *store.Store, log *slog.Logger, more ...projector.Projection) *projector.Projector {
	return projector.New(log, []projector.Batch{
		hotkeys.NewTallies(s), // feature: hotkeys
	}, append(Projections(s), more...)...)
}

// Projections are the features' projections of s's stream, which the
// projector applies after their batch steps.
func Projections(s *store.Store) []projector.Projection {
	return []projector.Projection{
		feed.NewProjection(s), // feature: feed
	}
}

// ProjectorFilters are the projector's event source filters: the
// features' projections' (as the stack orders them), then the hot keys'.
var ProjectorFilters = slices.Concat[[]map[string]any](
	feed.StreamFilters,    // feature: feed
	live.StreamFilters,    // feature: live
	hotkeys.StreamFilters, // feature: hotkeys
)
