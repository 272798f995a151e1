// Package cost counts what DynamoDB requests cost, per invocation:
// Middleware records every call made with a context carrying a Meter
// (WithMeter), its operation, keys, items and capacity units
// (ReturnConsumedCapacity: INDEXES). Calls without a Meter are not counted.
package cost

import (
	"context"
	"sync"
	"time"
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
