package capacity_test

import (
	"bytes"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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

var update = flag.Bool("update", false, "rewrite the model's figures")

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// The documented rules, on requests made by hand.
func TestTheDocumentedRules(t *testing.T) {
	item := func(pk string, body int, gsi bool) capacity.Item {
		it := capacity.Item{"pk": s(pk), "sk": s("s"), "b": s(strings.Repeat("x", body))}
		if gsi {
			it["gsi1pk"], it["gsi1sk"] = s("G#"+pk), s("s")
		}
		return it
	}
	for _, c := range []struct {
		name string
		req  capacity.Request
		want map[string]capacity.Units
	}{
		{"an eventually consistent GetItem of 9,000 bytes", capacity.Request{Operation: "GetItem", Reads: []capacity.Read{{PK: "A", Item: item("A", 9000, false), Found: true}}},
			map[string]capacity.Units{"A": {Read: 1.5}}},
		{"a strongly consistent GetItem of nothing", capacity.Request{Operation: "GetItem", Consistent: true, Reads: []capacity.Read{{PK: "A"}}},
			map[string]capacity.Units{"A": {Read: 1}}},
		{"a Query of three items of 3,000 bytes, rounded once", capacity.Request{Operation: "Query", Reads: []capacity.Read{
			{PK: "A", Item: item("A", 3000, false), Found: true}, {PK: "A", Item: item("A", 3000, false), Found: true}, {PK: "A", Item: item("A", 3000, false), Found: true}}},
			map[string]capacity.Units{"A": {Read: 1.5}}},
		{"a Query that reads nothing", capacity.Request{Operation: "Query"}, map[string]capacity.Units{"": {Read: 0.5}}},
		{"an UpdateItem shrinking 5,000 bytes to 10, in GSI1", capacity.Request{Operation: "UpdateItem", Writes: []capacity.Write{{PK: "A", Before: item("A", 5000, true), After: item("A", 10, true)}}},
			map[string]capacity.Units{"A": {Write: 5}, "GSI1 G#A": {Write: 5}}},
		{"three Puts of 10 bytes in a transaction, and a check", capacity.Request{Operation: "TransactWriteItems", Transactional: true, Writes: []capacity.Write{
			{PK: "A", After: item("A", 10, false)}, {PK: "B", After: item("B", 10, true)}, {PK: "C", After: item("C", 10, false)}, {PK: "D", Before: item("D", 3000, false), After: item("D", 3000, false), Check: true}}},
			map[string]capacity.Units{"A": {Write: 2}, "B": {Write: 2}, "GSI1 G#B": {Write: 2}, "C": {Write: 2}, "D": {Write: 6}}},
		{"a BatchWriteItem deleting an absent item", capacity.Request{Operation: "BatchWriteItem", Writes: []capacity.Write{{PK: "A"}}},
			map[string]capacity.Units{"A": {Write: 1}}},
	} {
		got := map[string]capacity.Units{}
		for k, u := range (capacity.Documented{}).Cost(c.req) {
			got[k.String()] = u
		}
		if !maps.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, fmt.Sprint(sorted(got)), fmt.Sprint(sorted(c.want)))
		}
	}
}

func sorted(m map[string]capacity.Units) []string {
	var out []string
	for k, u := range m {
		out = append(out, fmt.Sprintf("%s=%v", k, u))
	}
	slices.Sort(out)
	return out
}
