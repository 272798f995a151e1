package bench_test

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/golden"
	"github.com/example/appsync-dynamo/local/storetest"
)

var updateWrites = flag.Bool("update", false, "rewrite testdata/writes.md, projections.md and readings.md from this run")

// What every mutation costs is counted, not estimated: the table that make
// bench prints (DynamoDB Local's consumed capacity with index detail, for
// targets of each size) equals testdata/writes.md unit for unit, and
// docs/table.md carries the same table.
func TestWhatEveryMutationCosts(t *testing.T) {
	costs, err := bench.Writes(t.Context(), storetest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	bench.PrintWrites(&got, costs)
	wantTable(t, got.Bytes(), "testdata/writes.md", "WhatEveryMutation", "../../docs/table.md")
	var live bytes.Buffer
	bench.PrintLiveDollars(&live, costs, bench.PushChunk)
	wantTable(t, live.Bytes(), "testdata/live.md", "WhatEveryMutation", "../../docs/live.md")
}

// What each projection of GSI1 would cost is counted too: posts written and
// listed on a table with each candidate (testdata/projections.md, in
// docs/table.md).
func TestWhatEachProjectionCosts(t *testing.T) {
	costs, err := bench.ProjectionCosts(t.Context(), storetest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	bench.PrintProjections(&got, costs)
	wantTable(t, got.Bytes(), "testdata/projections.md", "WhatEachProjection", "../../docs/table.md")
}

// wantTable fails unless got equals the file (rewritten with -update) and
// the document docPath carries it.
func wantTable(t *testing.T, got []byte, file, test, docPath string) {
	t.Helper()
	old, _ := os.ReadFile(file) // what the document carries, before -update
	golden.File(t, file, got, *updateWrites, "go test ./local/bench -run "+test+" -update")
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	if *updateWrites && !bytes.Contains(doc, want) && len(old) > 0 && bytes.Contains(doc, old) {
		doc = bytes.Replace(doc, old, want, 1) // the document's copy of the table, rewritten with it
		if err := os.WriteFile(docPath, doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Contains(doc, want) {
		t.Errorf("%s does not carry %s (go test ./local/bench -run %s -update rewrites both)", docPath, file, test)
	}
}

// What each query costs under each reading of a merged field's selection
// is counted (testdata/readings.md, in docs/deploying.md); make dev's
// reading keeps the seed's query at one invocation and four round trips,
// and the safe reading answers every query in as few invocations or
// fewer where a query merges a field through a fragment.
func TestWhatEachReadingCosts(t *testing.T) {
	rows, err := bench.Readings(t.Context(), storetest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	bench.PrintReadings(&got, rows)
	wantTable(t, got.Bytes(), "testdata/readings.md", "WhatEachReading", "../../docs/deploying.md")
	if seed := rows[0].Results[0]; rows[0].Query.Name != bench.SeedQuery || seed.Invocations != 1 || seed.RoundTrips != 4 {
		t.Errorf("%s under make dev's reading: %+v, want 1 invocation and 4 round trips", rows[0].Query.Name, seed)
	}
	// docs/deploying.md: what the default reads more is counter items alone.
	for _, r := range rows {
		for shape, n := range r.Items[1] {
			if n > r.Items[0][shape] && !strings.HasSuffix(shape, " "+store.SKCount) {
				t.Errorf("%s: the default reads %d items %s, the every-occurrence reading %d: more than counter items", r.Query.Name, n, shape, r.Items[0][shape])
			}
		}
	}
}

// A published post costs the projector one write unit per follower (one
// entry of under 1 KB each, by BatchWriteItem) and a page of the feed two
// round trips.
func TestFeedCosts(t *testing.T) {
	fanOuts, err := bench.FanOuts(t.Context(), storetest.Endpoint(t), 10, 1000)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fanOuts {
		if f.Write != float64(f.Followers) || f.Requests["BatchWriteItem"] != (f.Followers+24)/25 {
			t.Errorf("%d followers: %g WCU, %v", f.Followers, f.Write, f.Requests)
		}
	}
	pages, err := bench.FeedPages(t.Context(), storetest.Endpoint(t), 50, 10)
	if err != nil {
		t.Fatal(err)
	}
	if pages[0].RoundTrips != 2 || pages[0].Requests != 3 || pages[1].Requests != 51 {
		t.Errorf("pages %+v; want the feed's 3 requests (entries and markers, then posts and follows) in 2 round trips, and 51 requests the other way", pages)
	}
	var out bytes.Buffer
	bench.PrintFeed(&out, fanOuts, pages)
	t.Log("\n" + out.String())
}
