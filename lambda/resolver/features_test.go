package resolver_test

import (
	"github.com/example/appsync-dynamo/lambda/feed" // feature: feed
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// wired are the optional features the tests' handlers serve, a line each,
// as lambda/cmd/resolver wires them: their events (lambda/<name>/events)
// replay beside the core's, and go with their folder and line.
func wired(s *store.Store) []resolver.Option {
	return []resolver.Option{
		resolver.WithFeature(feed.Feature(feed.NewTable(s))), // feature: feed
	}
}
