package bench_test

import (
	"bytes"
	"flag"
	"os"
	"testing"

	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/storetest"
)

var updateWrites = flag.Bool("update", false, "rewrite testdata/writes.md from this run")

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
	if *updateWrites {
		if err := os.WriteFile("testdata/writes.md", got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile("testdata/writes.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("the mutations cost otherwise (go test ./local/bench -run WhatEveryMutation -update after a deliberate change):\n%s\nwant\n%s", got.Bytes(), want)
	}
	doc, err := os.ReadFile("../../docs/table.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, want) {
		t.Error("docs/table.md does not carry testdata/writes.md")
	}
}
