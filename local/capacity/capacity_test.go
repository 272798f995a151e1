package capacity_test

import (
	"flag"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/local/capacity"
)

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
