// Package costdetail reads more of the DynamoDB calls a cost.Meter recorded
// than the function needs: the round trips they waited for one another
// (the critical path), where each call's capacity landed, and the keys it
// named. The last two need the call's SDK input and output, which only a
// context marked with cost.KeepRequests keeps.
package costdetail

import (
	"slices"
	"sort"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
)

// RoundTrips returns the length of the longest chain of calls each started
// after the one before it ended: calls that overlap count once, and calls in
// different branches of one cost.Together never wait for one another.
func RoundTrips(calls []cost.Call) int {
	_, critical := Critical(calls)
	n := 0
	for _, on := range critical {
		if on {
			n++
		}
	}
	return n
}

// Critical returns the calls by end time, and which of them are the longest
// chain RoundTrips counts (the first such chain to end): the critical path.
func Critical(calls []cost.Call) ([]cost.Call, []bool) {
	calls = slices.Clone(calls)
	sort.Slice(calls, func(i, j int) bool { return calls[i].End.Before(calls[j].End) })
	chain := make([]int, len(calls)) // the longest chain ending with each call
	prev := make([]int, len(calls))  // the call before it in that chain, -1 for none
	last := -1                       // the last call of the longest chain
	for i, c := range calls {
		chain[i], prev[i] = 1, -1
		// The calls that ended before c started come before it by end time.
		before := sort.Search(i, func(j int) bool { return calls[j].End.After(c.Start) })
		for j := range before {
			if chain[j]+1 > chain[i] && !concurrent(calls[j].Branch, c.Branch) {
				chain[i], prev[i] = chain[j]+1, j
			}
		}
		if last < 0 || chain[i] > chain[last] {
			last = i
		}
	}
	critical := make([]bool, len(calls))
	for i := last; i >= 0; i = prev[i] {
		critical[i] = true
	}
	return calls, critical
}

// concurrent reports whether two calls were made in different branches of
// one wave: where their branches first differ from the root, both are of
// the same wave.
func concurrent(a, b *cost.Branch) bool {
	pa, pb := lineage(a), lineage(b)
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			return pa[i].Wave == pb[i].Wave
		}
	}
	return false // one branch holds the other: sequential, as their times say
}

// lineage is b's branches from the outermost.
func lineage(b *cost.Branch) []*cost.Branch {
	var out []*cost.Branch
	for ; b != nil; b = b.Parent {
		out = append(out, b)
	}
	slices.Reverse(out)
	return out
}

// Units are capacity units read and written.
type Units struct{ Read, Write float64 }

// Where returns where the call's capacity landed, by index name ("" for
// the table), from DynamoDB's index detail; nil when it reported none or
// the output was not kept.
func Where(c cost.Call) map[string]Units {
	var ccs []types.ConsumedCapacity
	write := false
	switch out := c.Output.(type) {
	case *dynamodb.GetItemOutput:
		ccs = one(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		ccs = one(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		ccs = out.ConsumedCapacity
	case *dynamodb.TransactGetItemsOutput:
		ccs = out.ConsumedCapacity
	case *dynamodb.BatchWriteItemOutput:
		ccs, write = out.ConsumedCapacity, true
	case *dynamodb.PutItemOutput:
		ccs, write = one(out.ConsumedCapacity), true
	case *dynamodb.UpdateItemOutput:
		ccs, write = one(out.ConsumedCapacity), true
	case *dynamodb.DeleteItemOutput:
		ccs, write = one(out.ConsumedCapacity), true
	case *dynamodb.TransactWriteItemsOutput:
		ccs, write = out.ConsumedCapacity, true
	}
	var where map[string]Units
	add := func(name string, cap *types.Capacity) {
		if cap == nil {
			return
		}
		if where == nil {
			where = map[string]Units{}
		}
		// CapacityUnits: DynamoDB Local leaves the read and write figures of
		// a part out on reads; an operation either reads or writes.
		u := where[name]
		if write {
			u.Write += aws.ToFloat64(cap.CapacityUnits)
		} else {
			u.Read += aws.ToFloat64(cap.CapacityUnits)
		}
		where[name] = u
	}
	for i := range ccs {
		add("", ccs[i].Table)
		for name, cap := range ccs[i].GlobalSecondaryIndexes {
			add(name, &cap)
		}
		for name, cap := range ccs[i].LocalSecondaryIndexes {
			add(name, &cap)
		}
	}
	return where
}

func one(cc *types.ConsumedCapacity) []types.ConsumedCapacity {
	if cc == nil {
		return nil
	}
	return []types.ConsumedCapacity{*cc}
}

// KeysAsked lists the keys the call's input named: each key's string values
// in attribute order ("pk sk"), or a Query's key condition values; nil when
// the input was not kept.
func KeysAsked(c cost.Call) []string {
	key := func(k map[string]types.AttributeValue) string {
		names := make([]string, 0, len(k))
		for n := range k {
			names = append(names, n)
		}
		sort.Strings(names)
		var parts []string
		for _, n := range names {
			if v, ok := k[n].(*types.AttributeValueMemberS); ok {
				parts = append(parts, v.Value)
			}
		}
		return strings.Join(parts, " ")
	}
	keyOf := func(item map[string]types.AttributeValue) string {
		return key(map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
	}
	var out []string
	switch in := c.Input.(type) {
	case *dynamodb.GetItemInput:
		out = append(out, key(in.Key))
	case *dynamodb.QueryInput:
		var values []string
		for _, placeholder := range strings.Fields(aws.ToString(in.KeyConditionExpression)) {
			if v, ok := in.ExpressionAttributeValues[strings.Trim(placeholder, "()")].(*types.AttributeValueMemberS); ok {
				values = append(values, v.Value)
			}
		}
		out = append(out, strings.Join(values, " "))
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				out = append(out, key(k))
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, ws := range in.RequestItems {
			for _, w := range ws {
				if w.PutRequest != nil {
					out = append(out, keyOf(w.PutRequest.Item))
				} else if w.DeleteRequest != nil {
					out = append(out, key(w.DeleteRequest.Key))
				}
			}
		}
	case *dynamodb.UpdateItemInput:
		out = append(out, key(in.Key))
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, keyOf(it.Put.Item))
			case it.Update != nil:
				out = append(out, key(it.Update.Key))
			case it.Delete != nil:
				out = append(out, key(it.Delete.Key))
			case it.ConditionCheck != nil:
				out = append(out, key(it.ConditionCheck.Key))
			}
		}
	}
	return out
}
