package resolver_test

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/cursor"
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

// Every routed field, the core's and each wired feature's, comes with what
// adding one asks for besides its resolver (which New checks): an event to
// replay (events/<Type.field>.json, or <Type.field>-<case>.json; a
// feature's under lambda/<name>/events), whose golden reply TestReplayEvents
// -update writes; and, below the root, its AppSync batch size.
func TestEveryRouteHasAnEventAndABatchSize(t *testing.T) {
	s := store.New(nil, "unused", cursor.New(nil))
	h := resolver.New(s, slog.New(slog.DiscardHandler), append(wired(s), resolver.WithCostLog(io.Discard))...)
	files, err := filepath.Glob("../../events/*.json")
	if err != nil {
		t.Fatal(err)
	}
	features, err := filepath.Glob("../*/events/*.json")
	if err != nil {
		t.Fatal(err)
	}
	replayed := map[string]bool{}
	for _, f := range append(files, features...) {
		name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "-")
		replayed[name] = true
	}
	for _, r := range h.Routes().All() {
		if !replayed[r.Key()] {
			t.Errorf("%s has no event to replay: add events/%s.json (a feature's: lambda/<name>/events/), then run go test ./lambda/resolver -run TestReplayEvents -update and review its golden reply", r.Key(), r.Key())
		}
		if r.Type != "Query" && r.Type != "Mutation" && r.MaxBatchSize == 0 {
			t.Errorf("%s has no batch size: set its MaxBatchSize in its route (lambda/routes, or the feature's Routes): AppSync batches a child field's invocations", r.Key())
		}
	}
}
