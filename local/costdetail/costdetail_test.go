package costdetail

import (
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
)

func at(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }

func TestRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name  string
		calls [][2]int // start, end in ms
		want  int
	}{
		{"none", nil, 0},
		{"one", [][2]int{{0, 5}}, 1},
		{"three at once", [][2]int{{0, 5}, {1, 6}, {0, 4}}, 1},
		{"one after the other", [][2]int{{0, 5}, {5, 9}, {10, 12}}, 3},
		// user, then posts, then 11 comment Queries together, then authors.
		{"levels", [][2]int{{0, 3}, {4, 7}, {8, 12}, {8, 11}, {9, 13}, {8, 10}, {14, 16}}, 4},
		// A slow call overlapping a chain of two counts once; the chain twice.
		{"slow beside a chain", [][2]int{{0, 20}, {1, 3}, {4, 6}}, 2},
		{"recorded out of order", [][2]int{{10, 12}, {0, 5}, {6, 9}}, 3},
	} {
		var calls []cost.Call
		for _, c := range tc.calls {
			calls = append(calls, cost.Call{Operation: "Query", Start: at(c[0]), End: at(c[1])})
		}
		if got := RoundTrips(calls); got != tc.want {
			t.Errorf("%s: RoundTrips = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Calls in different branches of one wave never chain, whatever their times
// (a loaded machine may run one branch after another has ended); calls
// within a branch, and across waves, chain by their times. The branches are
// as cost.Together makes them.
func TestRoundTripsOfConcurrentBranches(t *testing.T) {
	var calls []cost.Call
	record := func(b *cost.Branch, start, end int) {
		calls = append(calls, cost.Call{Operation: "Query", Start: at(start), End: at(end), Branch: b})
	}
	record(nil, 0, 2) // the parent's read
	a, b := &cost.Branch{Wave: 1}, &cost.Branch{Wave: 1}
	record(a, 3, 5) // two branches, the second scheduled only after the first ended
	record(b, 6, 8)
	record(b, 9, 10) // and a second call in that branch, after its first
	a1, a2 := &cost.Branch{Wave: 2, Parent: a}, &cost.Branch{Wave: 2, Parent: a}
	record(a1, 11, 12) // a nested wave of branch a: siblings of each other
	record(a2, 13, 14)
	if got := RoundTrips(calls); got != 3 { // the parent, then b's two calls (or a and a nested call)
		t.Errorf("RoundTrips = %d, want 3", got)
	}
	record(&cost.Branch{Wave: 3}, 15, 16) // a later wave under the parent: after the first one
	if got := RoundTrips(calls); got != 4 {
		t.Errorf("with a later wave: RoundTrips = %d, want 4", got)
	}
}

// The critical path is the chain RoundTrips counts: the levels' calls that
// waited for one another, one a level, and none of the calls beside them.
func TestCritical(t *testing.T) {
	var calls []cost.Call
	// user, then posts, then three comment Queries together (the slowest
	// ends last), then authors.
	for i, c := range [][2]int{{0, 3}, {4, 7}, {8, 12}, {8, 11}, {9, 13}, {14, 16}} {
		calls = append(calls, cost.Call{Operation: "Query", Start: at(c[0]), End: at(c[1]), Tag: i + 1})
	}
	sorted, critical := Critical(calls)
	var on []int
	for i, c := range sorted {
		if critical[i] {
			on = append(on, c.Tag)
		}
	}
	// By end time: 1, 2, 4, 3, 5, 6. The authors' call started after every
	// comment Query ended; the first of them to end is the one chained.
	if len(on) != 4 || on[0] != 1 || on[1] != 2 || on[3] != 6 || RoundTrips(calls) != 4 {
		t.Errorf("critical calls %v (round trips %d), want 1, 2, a comment Query, 6", on, RoundTrips(calls))
	}
}

// Where reads the index detail of a write's and a read's output; KeysAsked
// a transaction's and a Query's keys.
func TestWhereAndKeysAsked(t *testing.T) {
	units := func(f float64) *types.Capacity { return &types.Capacity{CapacityUnits: aws.Float64(f)} }
	write := cost.Call{Output: &dynamodb.TransactWriteItemsOutput{ConsumedCapacity: []types.ConsumedCapacity{
		{Table: units(4), GlobalSecondaryIndexes: map[string]types.Capacity{"GSI1": *units(2)}}}}}
	if w := Where(write); w[""].Write != 4 || w["GSI1"].Write != 2 || w[""].Read != 0 {
		t.Errorf("Where(transaction) = %v", w)
	}
	read := cost.Call{Output: &dynamodb.QueryOutput{ConsumedCapacity: &types.ConsumedCapacity{Table: units(0.5)}}}
	if w := Where(read); w[""].Read != 0.5 || len(w) != 1 {
		t.Errorf("Where(query) = %v", w)
	}
	if w := Where(cost.Call{}); w != nil {
		t.Errorf("Where of a call without its output = %v", w)
	}
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	tx := cost.Call{Input: &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{Item: map[string]types.AttributeValue{"pk": s("POST#p"), "sk": s("COMMENT#c"), "body": s("x")}}},
		{ConditionCheck: &types.ConditionCheck{Key: map[string]types.AttributeValue{"pk": s("USER#u"), "sk": s("#COUNT")}}},
	}}}
	if got := KeysAsked(tx); len(got) != 2 || got[0] != "POST#p COMMENT#c" || got[1] != "USER#u #COUNT" {
		t.Errorf("KeysAsked(transaction) = %q", got)
	}
	q := cost.Call{Input: &dynamodb.QueryInput{KeyConditionExpression: aws.String("#0 = :0 AND begins_with(#1, :1)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":0": s("POST#p"), ":1": s("COMMENT#")}}}
	if got := KeysAsked(q); len(got) != 1 || got[0] != "POST#p COMMENT#" {
		t.Errorf("KeysAsked(query) = %q", got)
	}
}
