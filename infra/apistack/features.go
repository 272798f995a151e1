package apistack

import (
	"github.com/example/appsync-dynamo/lambda/budget"   // feature: budget
	"github.com/example/appsync-dynamo/lambda/feed"     // feature: feed
	"github.com/example/appsync-dynamo/lambda/hotkeys"  // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/live"     // feature: live
	"github.com/example/appsync-dynamo/lambda/trending" // feature: trending
)

// Wired are the optional features the stack deploys, a line each (the
// Lambda wires them in lambda/cmd, make dev in local/devserver): delete a
// feature's lines, marked with its name, and its folder under lambda/ to
// deploy the API without it (docs/layout.md).
var Wired = []Feature{
	{Environment: budget.Deployed}, // feature: budget
	{SDL: feed.SDL, Routes: feed.Routes, Projected: &Projected{Filters: feed.StreamFilters, Actions: feed.TableActions, IndexActions: feed.IndexActions}},                                                                                                                                                                                                // feature: feed
	{SDL: trending.SDL, Routes: trending.Routes, Consumer: &Consumer{ID: "Trending", Description: trending.Description, GaveUp: trending.GaveUp, Projection: trending.Projection, Actions: trending.TableActions, BatchSize: trending.StreamBatchSize, Retries: trending.StreamRetries, Filters: trending.StreamFilters, Window: trending.StreamWindow}}, // feature: trending
	{Projected: &Projected{Filters: hotkeys.StreamFilters, Actions: hotkeys.TableActions}},                                                                                           // feature: hotkeys
	{SDL: live.SDL, Routes: live.Routes, Projected: &Projected{Filters: live.StreamFilters, Actions: live.TableActions, IndexActions: live.IndexActions, APIFields: live.APIFields}}, // feature: live
}
