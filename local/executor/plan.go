package executor

import (
	"context"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/local/costdetail"
)

// A request's plan (Request.Plan): what resolved each routed field, every
// Lambda invocation, and every DynamoDB request with the invocation that
// made it, on one time axis from the request's start, and which requests
// are the critical path (the chain of requests that waited for one another
// and set dynamodbRoundTrips). Its totals equal extensions.cost's.

// Plan is extensions.plan.
type Plan struct {
	Resolvers   []PlannedResolver   `json:"resolvers"`
	Invocations []PlannedInvocation `json:"invocations"`
	Requests    []PlannedRequest    `json:"requests"`
}

// How a resolver was resolved.
const (
	EarlyReturn      = "early return"      // its JavaScript resolver returned the parent's answer
	Invoked          = "invocation"        // its JavaScript resolver invoked the Lambda
	DirectInvocation = "direct invocation" // a direct Lambda resolver
)

// PlannedResolver is one routed field of one parent.
type PlannedResolver struct {
	Path       string `json:"path"`
	Field      string `json:"field"`      // Type.field
	ResolvedBy string `json:"resolvedBy"` // EarlyReturn, Invoked or DirectInvocation
	// Invocation is the index in Invocations of the invocation that resolved
	// it; absent for an early return.
	Invocation *int `json:"invocation,omitempty"`
}

// PlannedInvocation is one Lambda invocation.
type PlannedInvocation struct {
	Field    string  `json:"field"`
	Batch    int     `json:"batch"` // events: 1 for an Invoke
	BytesIn  int     `json:"bytesIn"`
	BytesOut int     `json:"bytesOut"`
	Start    float64 `json:"start"` // ms from the request's start
	End      float64 `json:"end"`
}

// PlannedRequest is one DynamoDB request.
type PlannedRequest struct {
	Operation string   `json:"operation"`
	Index     string   `json:"index,omitempty"` // "" for the table
	Keys      int      `json:"keys"`            // keys or items asked for, for a batch or transaction
	KeysAsked []string `json:"keysAsked"`       // each key ("pk sk"), or a Query's key condition values
	Items     int      `json:"items"`           // items returned, for a read
	Read      float64  `json:"readCapacityUnits"`
	Write     float64  `json:"writeCapacityUnits"`
	BytesOut  int64    `json:"bytesOut"` // the HTTP bodies sent to DynamoDB, every attempt's
	BytesIn   int64    `json:"bytesIn"`  // and received
	Start     float64  `json:"start"`
	End       float64  `json:"end"`
	// Invocation is the index in Invocations of the one that made it
	// (absent for none: a request made outside any), and Field its field.
	Invocation *int   `json:"invocation,omitempty"`
	Field      string `json:"field,omitempty"`
	Critical   bool   `json:"critical"`
}

// planner records a plan as the request runs.
type planner struct {
	start time.Time
	mu    sync.Mutex
	plan  Plan
}

func newPlanner() *planner {
	return &planner{start: time.Now(), plan: Plan{Resolvers: []PlannedResolver{}, Invocations: []PlannedInvocation{}, Requests: []PlannedRequest{}}}
}

func (p *planner) ms(t time.Time) float64 { return float64(t.Sub(p.start).Microseconds()) / 1000 }

// site is what an invocation resolves: the field, and the calls of its
// events (each a resolver of the plan).
type site struct {
	field  string
	calls  []call
	direct bool
}

// invoked records an invocation of site that sent bytesIn, and returns the
// context its DynamoDB requests are tagged with and a function recording
// its end and reply.
func (p *planner) invoked(ctx context.Context, s site, bytesIn int) (context.Context, func(bytesOut int)) {
	if p == nil {
		return ctx, func(int) {}
	}
	p.mu.Lock()
	i := len(p.plan.Invocations)
	p.plan.Invocations = append(p.plan.Invocations, PlannedInvocation{Field: s.field, Batch: len(s.calls), BytesIn: bytesIn, Start: p.ms(time.Now())})
	how := Invoked
	if s.direct {
		how = DirectInvocation
	}
	for _, c := range s.calls {
		p.plan.Resolvers = append(p.plan.Resolvers, PlannedResolver{Path: pathString(c.node.path), Field: s.field, ResolvedBy: how, Invocation: &i})
	}
	p.mu.Unlock()
	return cost.KeepRequests(cost.WithTag(ctx, i+1)), func(bytesOut int) {
		p.mu.Lock()
		p.plan.Invocations[i].BytesOut, p.plan.Invocations[i].End = bytesOut, p.ms(time.Now())
		p.mu.Unlock()
	}
}

// returnedEarly records c's resolver, which returned early.
func (p *planner) returnedEarly(field string, c call) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.plan.Resolvers = append(p.plan.Resolvers, PlannedResolver{Path: pathString(c.node.path), Field: field, ResolvedBy: EarlyReturn})
	p.mu.Unlock()
}

// finish adds the meter's requests, with their critical path.
func (p *planner) finish(m *cost.Meter) Plan {
	calls, critical := costdetail.Critical(m.Calls())
	for i, c := range calls {
		r := PlannedRequest{Operation: c.Operation, Index: c.Index, Keys: c.Keys, KeysAsked: costdetail.KeysAsked(c), Items: c.Items, Read: c.Read, Write: c.Write,
			BytesOut: c.BytesOut, BytesIn: c.BytesIn, Start: p.ms(c.Start), End: p.ms(c.End), Critical: critical[i]}
		if c.Tag > 0 {
			inv := c.Tag - 1
			r.Invocation, r.Field = &inv, p.plan.Invocations[inv].Field
		}
		p.plan.Requests = append(p.plan.Requests, r)
	}
	return p.plan
}
