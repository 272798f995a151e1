// Package cost counts what DynamoDB requests cost, per invocation:
// Middleware records every call made with a context carrying a Meter
// (WithMeter), its operation, keys, items and capacity units
// (ReturnConsumedCapacity: INDEXES). Calls without a Meter are not counted.
package cost

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Call is one DynamoDB API call (retries by the SDK included in it).
type Call struct {
	Operation  string    // "Query", "BatchGetItem", ...
	Index      string    // the index a Query read, "" for the table
	Keys       int       // keys or items a batch or transaction asked for
	Items      int       // items returned, for reads
	Read       float64   // read capacity units consumed
	Write      float64   // write capacity units consumed
	Start, End time.Time // when it began, and when its answer (or last retry) came back
	Branch     *Branch   // where it was made among concurrent calls (Together)
	Tag        int       // the tag of the context it was made with (WithTag); 0 for none
	// BytesOut and BytesIn are the HTTP bodies sent and received, every
	// attempt's (their Content-Length; 0 where it was not known).
	BytesOut, BytesIn int64
	// Input and Output are the SDK's, kept only for a context marked with
	// KeepRequests (a local plan's), so that a function pays nothing for them.
	Input, Output any
}

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
	m := &Meter{parent: fromContext(ctx)}
	return context.WithValue(ctx, meterKey{}, m), m
}

func (m *Meter) record(c Call) {
	for ; m != nil; m = m.parent {
		m.mu.Lock()
		m.calls = append(m.calls, c)
		m.mu.Unlock()
	}
}

// fromContext returns the context's Meter, or nil.
func fromContext(ctx context.Context) *Meter {
	m, _ := ctx.Value(meterKey{}).(*Meter)
	return m
}

type tagKey struct{}

// WithTag returns a context whose DynamoDB calls carry tag (Call.Tag).
func WithTag(ctx context.Context, tag int) context.Context {
	return context.WithValue(ctx, tagKey{}, tag)
}

type keepKey struct{}

// KeepRequests returns a context whose calls keep their SDK input and output
// (Call.Input, Call.Output) for a closer look.
func KeepRequests(ctx context.Context) context.Context {
	return context.WithValue(ctx, keepKey{}, true)
}

// A Branch is one of a group of concurrent branches (a wave, Together's),
// inside the branch its wave was started from (nil for none).
type Branch struct {
	Wave   uint64
	Parent *Branch
}

type branchKey struct{}

var waves atomic.Uint64

// Together starts a group of concurrent branches under ctx and returns a
// function giving each branch its context (call it once per goroutine): a
// call in one branch never counts as waiting for a call in another.
func Together(ctx context.Context) func() context.Context {
	wave := waves.Add(1)
	parent, _ := ctx.Value(branchKey{}).(*Branch)
	return func() context.Context {
		return context.WithValue(ctx, branchKey{}, &Branch{Wave: wave, Parent: parent})
	}
}

// The SDK middleware that records each call: what it asked (operation,
// index, keys), what it got (items, the capacity DynamoDB reports), and
// when.

// Middleware adds the counting step to a DynamoDB client's stack
// (o.APIOptions = append(o.APIOptions, cost.Middleware)).
func Middleware(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("cost.Meter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			m := fromContext(ctx)
			if m == nil {
				return next.HandleInitialize(ctx, in)
			}
			call := describeInput(ctx, in.Parameters)
			call.Branch, _ = ctx.Value(branchKey{}).(*Branch)
			call.Tag, _ = ctx.Value(tagKey{}).(int)
			call.Start = time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, bytesKey{}, &call), in)
			call.End = time.Now()
			if err == nil {
				describeOutput(&call, out.Result)
			}
			if ctx.Value(keepKey{}) != nil {
				call.Input, call.Output = in.Parameters, out.Result
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

const indexes = types.ReturnConsumedCapacityIndexes

// describeInput names the call, asks it to report the capacity it consumed
// by index (ReturnConsumedCapacity: INDEXES), and counts the keys it names.
func describeInput(ctx context.Context, params any) Call {
	c := Call{Operation: awsmiddleware.GetOperationName(ctx)}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity, c.Index = indexes, aws.ToString(in.IndexName)
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity, c.Index = indexes, aws.ToString(in.IndexName)
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = indexes
		for _, ka := range in.RequestItems {
			c.Keys += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = indexes
		for _, w := range in.RequestItems {
			c.Keys += len(w)
		}
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, len(in.TransactItems)
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, len(in.TransactItems)
	}
	return c
}

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		c.Items, c.Read = min(len(out.Item), 1), unitsOf(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		c.Items, c.Read = len(out.Items), unitsOf(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		c.Items, c.Read = len(out.Items), unitsOf(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			c.Items += len(items)
		}
		c.Read = sumOf(out.ConsumedCapacity)
	case *dynamodb.TransactGetItemsOutput:
		c.Items, c.Read = len(out.Responses), sumOf(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		c.Write = sumOf(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		c.Write = sumOf(out.ConsumedCapacity)
	}
}

// unitsOf is cc's capacity units (0 for none).
func unitsOf(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

// sumOf adds up the capacity units of ccs.
func sumOf(ccs []types.ConsumedCapacity) (t float64) {
	for i := range ccs {
		t += unitsOf(&ccs[i])
	}
	return t
}
