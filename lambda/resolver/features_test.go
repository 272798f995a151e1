package resolver_test

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/feed"  // feature: feed
	"github.com/example/appsync-dynamo/lambda/live"  // feature: live
	"github.com/example/appsync-dynamo/lambda/probe" // feature: probe
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// eventFiles are the events to replay: the core's (events/*.json), and the
// features' (lambda/<name>/events/*.json).
func eventFiles(t *testing.T) (core, features []string) {
	core, err := filepath.Glob("../../events/*.json")
	if err != nil || len(core) == 0 {
		t.Fatalf("no events found: %v", err)
	}
	if features, err = filepath.Glob("../*/events/*.json"); err != nil {
		t.Fatal(err)
	}
	return core, features
}

// wiredSDL are the parts of the schema of the features wired serves.
var wiredSDL = []string{
	feed.SDL, // feature: feed
	live.SDL, // feature: live
}

// wired are the optional features the tests' handlers serve, a line each,
// as lambda/cmd/resolver wires them: their events (lambda/<name>/events)
// replay beside the core's, and go with their folder and line.
func wired(s *store.Store) []resolver.Option {
	return []resolver.Option{
		resolver.WithFeature(feed.Feature(feed.NewTable(s))), // feature: feed
		resolver.WithFeature(live.Feature(s)),                // feature: live
		resolver.WithFeature(probe.Feature()),                // feature: probe
	}
}

// Every routed field, the core's and each wired feature's, comes with what
// adding one asks for besides its resolver (which New checks): an event to
// replay (events/<Type.field>.json, or <Type.field>-<case>.json; a
// feature's under lambda/<name>/events), whose golden reply TestReplayEvents
// -update writes; below the root, its AppSync batch size; and its cost: a
// read's row among docs/table.md's access patterns, a mutation's in the
// measured writes table (local/bench/testdata/writes.md).
func TestEveryRouteHasAnEventABatchSizeAndACost(t *testing.T) {
	patterns, err := os.ReadFile("../../docs/table.md")
	if err != nil {
		t.Fatal(err)
	}
	writes, err := os.ReadFile("../../local/bench/testdata/writes.md")
	if err != nil {
		t.Fatal(err)
	}
	s := store.New(nil, "unused", cursor.New(nil))
	h := resolver.New(s, slog.New(slog.DiscardHandler), append(wired(s), resolver.WithCostLog(io.Discard))...)
	files, features := eventFiles(t)
	replayed := map[string]bool{}
	for _, f := range append(files, features...) {
		name, _, _ := strings.Cut(strings.TrimSuffix(filepath.Base(f), ".json"), "-")
		replayed[name] = true
	}
	for _, r := range h.Routes().All() {
		if !replayed[r.Key()] {
			t.Errorf("%s has no event to replay: add events/%s.json (a feature's: lambda/<name>/events/), then run go test ./lambda/resolver -run TestReplayEvents -update and review its golden reply", r.Key(), r.Key())
		}
		if r.EarlyReturn() && r.MaxBatchSize == 0 {
			t.Errorf("%s has no batch size: set its MaxBatchSize in its route (lambda/resolver/routes.go, or the feature's Routes): AppSync batches a child field's invocations", r.Key())
		}
		switch {
		case r.Type == "Mutation" && !bytes.Contains(writes, []byte("| "+r.Field+" |")) && !bytes.Contains(writes, []byte("| "+r.Field+", ")):
			t.Errorf("%s has no row in the measured writes table: measure it in local/bench (writes.go), then go test ./local/bench -run WhatEveryMutation -update", r.Key())
		case r.Type != "Mutation" && !bytes.Contains(patterns, []byte("`"+r.Key())):
			t.Errorf("%s has no row among docs/table.md's access patterns: add one naming `%s` and the DynamoDB requests it makes", r.Key(), r.Key())
		}
	}
}
