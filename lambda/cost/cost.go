// Package cost counts what DynamoDB requests cost, per invocation.
//
// Middleware, added to a DynamoDB client's APIOptions, records every API call
// made with a context that carries a Meter (see WithMeter): the operation, the
// index, how many keys a batch asked for, and the capacity units DynamoDB
// reports, in all and for the table and each index apart: it asks every
// request that can report capacity to report it with index detail
// (ReturnConsumedCapacity: INDEXES). Calls made without a Meter are not
// counted.
package cost

import (
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Call is one DynamoDB API call (retries by the SDK included in it).
type Call struct {
	Operation string  // "Query", "BatchGetItem", ...
	Index     string  // the index a Query read, "" for the table
	Keys      int     // keys or items a batch or transaction asked for
	Items     int     // items returned, for reads
	Read      float64 // read capacity units consumed
	Write     float64 // write capacity units consumed
	// Where the units landed: by index name, "" for the table (DynamoDB's
	// index detail; nil when it reported none).
	Where map[string]Units
	// Start and End are when the call began and when its answer (or last
	// retry) came back.
	Start, End time.Time
	// Tag is the tag of the context it was made with (WithTag): who made it,
	// for a plan of the request; 0 for none.
	Tag int
	// BytesOut and BytesIn are the HTTP bodies sent and received, every
	// attempt's (their Content-Length; 0 where the length was not known).
	BytesOut, BytesIn int64
	// KeysAsked are the keys the call named (each "pk sk", a Query's key
	// condition values), recorded only for a tagged call (a plan's): nil
	// otherwise, so that a deployed function pays nothing for them.
	KeysAsked []string

	branch *branch // where it was made among concurrent calls (Together)
}

// Units are capacity units read and written.
type Units struct{ Read, Write float64 }

// Meter accumulates the calls made under one context. It is safe for
// concurrent use.
type Meter struct {
	parent *Meter // the enclosing meter, which sees every call too
	mu     sync.Mutex
	calls  []Call
}

// Calls returns a copy of the calls recorded so far, in completion order.
func (m *Meter) Calls() []Call {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Call(nil), m.calls...)
}

// Count returns how many calls of the operation were recorded.
func (m *Meter) Count(operation string) int {
	n := 0
	for _, c := range m.Calls() {
		if c.Operation == operation {
			n++
		}
	}
	return n
}

// Total returns the number of calls recorded.
func (m *Meter) Total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.calls)
}

// RoundTrips returns the length of the longest chain of calls in which
// each call started after the one before it had ended: the DynamoDB round
// trips that had to wait for one another. Calls that overlap in time count
// once, so requests made together are one round trip; and calls made in
// different branches of the same Together never wait for one another,
// even when a loaded machine ran one branch only after another had ended.
func (m *Meter) RoundTrips() int {
	_, critical := m.Critical()
	n := 0
	for _, on := range critical {
		if on {
			n++
		}
	}
	return n
}

// Critical returns the calls recorded, by end time, and which of them are
// the longest chain RoundTrips counts (the first such chain to end): the
// critical path, whose length is the round trips.
func (m *Meter) Critical() ([]Call, []bool) {
	calls := m.Calls()
	slices.SortFunc(calls, func(a, b Call) int { return a.End.Compare(b.End) })
	chain := make([]int, len(calls)) // the longest chain ending with each call
	prev := make([]int, len(calls))  // the call before it in that chain, -1 for none
	last := -1                       // the last call of the longest chain
	for i, c := range calls {
		chain[i], prev[i] = 1, -1
		// The calls that ended before c started come before it by end time.
		before := sort.Search(i, func(j int) bool { return calls[j].End.After(c.Start) })
		for j := range before {
			if chain[j]+1 > chain[i] && !concurrent(calls[j].branch, c.branch) {
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

type tagKey struct{}

// WithTag returns a context whose DynamoDB calls carry tag (Call.Tag).
func WithTag(ctx context.Context, tag int) context.Context {
	return context.WithValue(ctx, tagKey{}, tag)
}

// branch is one of a group of concurrent branches (a wave), inside the
// branch its wave was started from.
type branch struct {
	wave   uint64
	parent *branch
}

type branchKey struct{}

var waves atomic.Uint64

// Together starts a group of concurrent branches under ctx and returns a
// function that gives each branch its context: call it once per goroutine.
// A DynamoDB call made in one branch is never counted as waiting for a call
// made in another (RoundTrips), whatever the times say; calls within one
// branch chain by their times, as everywhere.
func Together(ctx context.Context) func() context.Context {
	wave := waves.Add(1)
	parent, _ := ctx.Value(branchKey{}).(*branch)
	return func() context.Context {
		return context.WithValue(ctx, branchKey{}, &branch{wave: wave, parent: parent})
	}
}

// concurrent reports whether two calls were made in different branches of
// one wave: where their branches first differ from the root, both are of
// the same wave.
func concurrent(a, b *branch) bool {
	pa, pb := lineage(a), lineage(b)
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			return pa[i].wave == pb[i].wave
		}
	}
	return false // one branch holds the other: sequential, as their times say
}

// lineage is b's branches from the outermost.
func lineage(b *branch) []*branch {
	var out []*branch
	for ; b != nil; b = b.parent {
		out = append(out, b)
	}
	slices.Reverse(out)
	return out
}

// Summary is a meter's totals.
type Summary struct {
	Requests map[string]int // calls by operation
	Read     float64        // read capacity units
	Write    float64        // write capacity units
}

// Summary returns the totals of the calls recorded.
func (m *Meter) Summary() Summary {
	s := Summary{Requests: map[string]int{}}
	for _, c := range m.Calls() {
		s.Requests[c.Operation]++
		s.Read += c.Read
		s.Write += c.Write
	}
	return s
}

type meterKey struct{}

// WithMeter returns a context whose DynamoDB calls are recorded in a new
// Meter, and that Meter. Calls are also recorded in the meters of the
// enclosing contexts, so an outer meter (a whole GraphQL request) sees what
// an inner one (one Lambda invocation) counts.
func WithMeter(ctx context.Context) (context.Context, *Meter) {
	m := &Meter{parent: FromContext(ctx)}
	return context.WithValue(ctx, meterKey{}, m), m
}

func (m *Meter) record(c Call) {
	for ; m != nil; m = m.parent {
		m.mu.Lock()
		m.calls = append(m.calls, c)
		m.mu.Unlock()
	}
}

// FromContext returns the context's Meter, or nil.
func FromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

// Middleware adds the counting step to a DynamoDB client's stack:
//
//	dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
//		o.APIOptions = append(o.APIOptions, cost.Middleware)
//	})
func Middleware(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("cost.Meter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			m := FromContext(ctx)
			if m == nil {
				return next.HandleInitialize(ctx, in)
			}
			call := describeInput(in.Parameters)
			call.branch, _ = ctx.Value(branchKey{}).(*branch)
			call.Tag, _ = ctx.Value(tagKey{}).(int)
			if call.Tag != 0 {
				call.KeysAsked = keysAsked(in.Parameters)
			}
			call.Start = time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, bytesKey{}, &call), in)
			call.End = time.Now()
			if err == nil {
				describeOutput(&call, out.Result)
			}
			m.record(call)
			return out, md, err
		}), middleware.After); err != nil {
		return err
	}
	// Each attempt's bodies, once sent and answered.
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("cost.Bytes",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if call, ok := ctx.Value(bytesKey{}).(*Call); ok {
				if req, ok := in.Request.(*smithyhttp.Request); ok && req.ContentLength > 0 {
					call.BytesOut += req.ContentLength
				}
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.ContentLength > 0 {
					call.BytesIn += resp.ContentLength
				}
			}
			return out, md, err
		}), middleware.Before)
}

type bytesKey struct{}

var total = types.ReturnConsumedCapacityIndexes

// describeInput names the call and asks it to report consumed capacity.
func describeInput(params any) Call {
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "GetItem", Keys: 1}
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "Query", Index: aws.ToString(in.IndexName)}
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "Scan", Index: aws.ToString(in.IndexName)}
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
		n := 0
		for _, ka := range in.RequestItems {
			n += len(ka.Keys)
		}
		return Call{Operation: "BatchGetItem", Keys: n}
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = total
		n := 0
		for _, w := range in.RequestItems {
			n += len(w)
		}
		return Call{Operation: "BatchWriteItem", Keys: n}
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "PutItem", Keys: 1}
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "UpdateItem", Keys: 1}
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "DeleteItem", Keys: 1}
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "TransactWriteItems", Keys: len(in.TransactItems)}
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "TransactGetItems", Keys: len(in.TransactItems)}
	case *dynamodb.CreateTableInput:
		return Call{Operation: "CreateTable"}
	case *dynamodb.DeleteTableInput:
		return Call{Operation: "DeleteTable"}
	default:
		return Call{Operation: "Other"}
	}
}

// keysAsked lists the keys a request names: each key's string values in
// attribute order ("pk sk"), or a Query's key condition values.
func keysAsked(params any) []string {
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
	switch in := params.(type) {
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

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		if out.Item != nil {
			c.Items = 1
		}
		c.Read += units(out.ConsumedCapacity)
		whereOne(c, false, out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
		whereOne(c, false, out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			c.Items += len(items)
		}
		c.Read += sumUnits(out.ConsumedCapacity)
		where(c, false, out.ConsumedCapacity...)
	case *dynamodb.TransactGetItemsOutput:
		c.Items = len(out.Responses)
		c.Read += sumUnits(out.ConsumedCapacity)
		where(c, false, out.ConsumedCapacity...)
	case *dynamodb.BatchWriteItemOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
		where(c, true, out.ConsumedCapacity...)
	case *dynamodb.PutItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
		where(c, true, out.ConsumedCapacity...)
	}
}

// where adds the index detail of ccs to c.Where, as units written or read.
func where(c *Call, write bool, ccs ...types.ConsumedCapacity) {
	add := func(name string, cap *types.Capacity) {
		if cap == nil {
			return
		}
		if c.Where == nil {
			c.Where = map[string]Units{}
		}
		// CapacityUnits: DynamoDB Local leaves the read and write figures of
		// a part out on reads; an operation either reads or writes.
		u := c.Where[name]
		if write {
			u.Write += aws.ToFloat64(cap.CapacityUnits)
		} else {
			u.Read += aws.ToFloat64(cap.CapacityUnits)
		}
		c.Where[name] = u
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
}

func whereOne(c *Call, write bool, cc *types.ConsumedCapacity) {
	if cc != nil {
		where(c, write, *cc)
	}
}

func units(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

func sumUnits(ccs []types.ConsumedCapacity) float64 {
	var t float64
	for i := range ccs {
		t += units(&ccs[i])
	}
	return t
}
