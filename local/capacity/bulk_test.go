//go:build !race && !nobulk

// The tests of this file run the package's code at volume (thousands of
// generated queries, the largest payloads, every cut point of a redo, the
// capacity workloads). The race detector would cost them 4 to 10 times
// their time for code the package's other tests run under it, concurrently:
// make test runs them in a pass of their own, without it; the copies of the
// tree that local/removal and local/extending test, whose changes are to
// wiring and not to volume, leave them out (nobulk) (docs/local.md).

package capacity_test

import (
	"bytes"
	"maps"
	"os"
	"testing"

	"github.com/example/appsync-dynamo/local/capacity"
	"github.com/example/appsync-dynamo/local/golden"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The model's cost of every request the workloads make, by DynamoDB
// Local's accounting, equals what DynamoDB Local reports for it, on the
// table and on each index.
func TestLocalReportsWhatTheModelCosts(t *testing.T) {
	client := storetest.Client(t)
	e, err := capacity.NewEnv(t.Context(), storetest.Endpoint(t), storetest.NewStreamTable(t, client))
	if err != nil {
		t.Fatal(err)
	}
	recorded, err := capacity.Run(t.Context(), e, capacity.Workloads())
	if err != nil {
		t.Fatal(err)
	}
	var requests []capacity.Request
	for _, r := range recorded {
		requests = append(requests, r.Before...)
		if r.Workload.Hot != nil {
			requests = append(requests, r.After...)
		}
	}
	ops := map[string]int{}
	differ := 0
	for _, r := range requests {
		if r.Failed {
			continue
		}
		ops[r.Operation]++
		model := map[string]float64{}
		for k, u := range (capacity.Local{}).Cost(r) {
			model[k.Index] += u.Read + u.Write
		}
		for where, v := range r.Reported {
			if v == 0 {
				delete(r.Reported, where)
			}
		}
		if !maps.Equal(model, r.Reported) {
			if differ++; differ <= 10 {
				found := 0
				for _, rd := range r.Reads {
					if rd.Found {
						found++
					}
				}
				t.Errorf("%s (%d reads, %d found, %d writes): the model costs %v, DynamoDB Local reports %v", r.Operation, len(r.Reads), found, len(r.Writes), model, r.Reported)
			}
		}
	}
	if differ > 0 {
		t.Errorf("%d of %d requests differ", differ, len(requests))
	}
	for _, op := range []string{"GetItem", "Query", "BatchGetItem", "TransactWriteItems", "UpdateItem"} {
		if ops[op] == 0 {
			t.Errorf("the workloads made no %s: its rule is not checked", op)
		}
	}
	t.Logf("%d requests checked: %v", len(requests), ops)

	// The docs carry the model's figures by the documented rules, and its chart.
	results := capacity.Cost(recorded, capacity.Documented{})
	var table, chart bytes.Buffer
	capacity.Print(&table, results, 3)
	capacity.Chart(&chart, results)
	const rerun = "go test ./local/capacity -update"
	was, _ := os.ReadFile("testdata/workloads.md")
	golden.File(t, "testdata/workloads.md", table.Bytes(), *update, rerun)
	golden.File(t, "../../docs/capacity.svg", chart.Bytes(), *update, rerun)
	doc, err := os.ReadFile("../../docs/capacity.md")
	if err != nil {
		t.Fatal(err)
	}
	if *update && !bytes.Contains(doc, table.Bytes()) && bytes.Count(doc, was) == 1 {
		doc = bytes.Replace(doc, was, table.Bytes(), 1)
		if err := os.WriteFile("../../docs/capacity.md", doc, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Contains(doc, table.Bytes()) {
		t.Error("docs/capacity.md does not carry testdata/workloads.md (" + rerun + " rewrites both)")
	}
	readme, err := os.ReadFile("../../README.md")
	if headline := capacity.Headline(results); err != nil || !bytes.Contains(readme, []byte(headline)) {
		t.Errorf("README.md does not say %q (%v)", headline, err)
	}
}
