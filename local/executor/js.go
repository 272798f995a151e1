package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/jsresolver"
)

// WithDirectResolvers gives every routed field a direct Lambda resolver, as
// the layouts the benchmark compares with have it, instead of the
// JavaScript resolver the stack deploys on child fields.
func WithDirectResolvers() Option { return func(e *Executor) { e.child = nil } }

// child loads the stack's child-field resolver once. It is embedded, so a
// failure is a build error, caught by this package's tests.
var child = sync.OnceValue(func() *jsresolver.Resolver {
	r, err := jsresolver.Load("appsyncjs/child.js", appsyncjs.Child)
	if err != nil {
		panic(err)
	}
	return r
})

// jsResolver is the JavaScript resolver the stack deploys on the route's
// field, nil for a direct Lambda resolver: the child resolver on a field
// of an object (unless WithDirectResolvers), the one that ends
// subscriptions on a mutation that Invalidates.
func (e *Executor) jsResolver(route resolver.Route) *jsresolver.Resolver {
	switch {
	case route.EarlyReturn():
		return e.child
	case route.Invalidates:
		return root()
	}
	return nil
}

// invokeJS resolves the calls of a field with the JavaScript resolver js, as
// AppSync runs a unit resolver on a Lambda data source: each call's request
// handler returns early (no invocation) or gives a payload; the payloads
// are sent in batches of at most MaxBatchSize (BatchInvoke) or one by one
// (Invoke); each result goes through the response handler, whose
// invalidations of subscriptions (a mutation's) reach the publisher.
func (r *run) invokeJS(ctx context.Context, route resolver.Route, calls []call, js *jsresolver.Resolver) []outcome {
	out := make([]outcome, len(calls))
	type pending struct {
		i   int
		ctx jsresolver.Context
		req jsresolver.Request
		c   call
	}
	var batched, single []pending
	for i, c := range calls {
		if c.limited {
			out[i] = errResolverLimit
			continue
		}
		ctx := r.jsContext(c)
		req, err := js.Request(ctx)
		switch {
		case err != nil:
			out[i] = jsFailure(err)
		case req.Early:
			out[i] = outcome{data: req.Value}
			r.mu.Lock()
			r.earlyReturns++
			r.mu.Unlock()
			r.plan.returnedEarly(c.key(), c)
		case req.Operation == "BatchInvoke":
			batched = append(batched, pending{i, ctx, req, c})
		default:
			single = append(single, pending{i, ctx, req, c})
		}
	}
	respond := func(p pending, result any, err error) {
		if err != nil {
			o := lambdaError(err)
			p.ctx.Error = &jsresolver.SourceErr{Message: o.err.Error(), Type: o.errType}
		}
		p.ctx.Result = result
		v, ext, err := js.Response(p.ctx)
		if err != nil {
			out[p.i] = jsFailure(err)
			return
		}
		if len(ext.Invalidations) > maxInvalidations {
			out[p.i] = outcome{err: fmt.Errorf("at most %d extensions.invalidateSubscriptions calls a request, not %d", maxInvalidations, len(ext.Invalidations)), errType: "BadRequestException"}
			return
		}
		r.invalidate(route, ext.Invalidations)
		out[p.i] = outcome{data: v}
	}
	size := max(route.MaxBatchSize, 1)
	var wg sync.WaitGroup
	branch := cost.Together(ctx) // the invocations of a field run at the same time
	for start := 0; start < len(batched); start += size {
		chunk := batched[start:min(start+size, len(batched))]
		ctx := branch()
		wg.Go(func() {
			payloads := make([]any, len(chunk))
			s := site{field: chunk[0].c.key()}
			for k, p := range chunk {
				payloads[k] = p.req.Payload
				s.calls = append(s.calls, p.c)
			}
			items, err := r.invokePayload(ctx, payloads, len(chunk), s)
			for k, p := range chunk {
				var item any
				if err == nil {
					item = items[k]
				}
				respond(p, item, err)
			}
		})
	}
	for _, p := range single {
		ctx := branch()
		wg.Go(func() {
			reply, err := r.invokePayload(ctx, p.req.Payload, -1, site{field: p.c.key(), calls: []call{p.c}})
			var v any
			if err == nil && len(reply) == 1 {
				v = reply[0]
			}
			respond(p, v, err)
		})
	}
	wg.Wait()
	return out
}

// jsContext is the ctx AppSync gives the resolver of call c.
func (r *run) jsContext(c call) jsresolver.Context {
	var identity any
	if r.req.Identity != nil {
		b, _ := json.Marshal(r.req.Identity)
		_ = json.Unmarshal(b, &identity)
	}
	headers := map[string]any{}
	for k, v := range r.req.Headers {
		headers[k] = v
	}
	var source any
	if c.task.source != nil {
		source = c.task.source
	}
	return jsresolver.Context{
		Arguments: r.args(c.field),
		Source:    source,
		Identity:  identity,
		Request:   map[string]any{"headers": headers, "domainName": nil},
		Info: jsresolver.Info{
			FieldName:           c.field.name,
			ParentTypeName:      c.task.typ.Name,
			Variables:           r.varsJSON,
			SelectionSetList:    r.selectionList(r.described(c.field)),
			SelectionSetGraphQL: selectionGraphQL(r.described(c.field)),
		},
	}
}

// jsFailure is the outcome of a handler that raised a GraphQL error
// (util.error) or failed.
func jsFailure(err error) outcome {
	var gqlErr *jsresolver.Error
	if errors.As(err, &gqlErr) {
		return outcome{err: errors.New(gqlErr.Message), errType: gqlErr.Type}
	}
	return outcome{err: err, errType: "Code"}
}

// maxInvalidations is the most extensions.invalidateSubscriptions calls
// AppSync takes in one request.
const maxInvalidations = 5

// invalidate hands a mutation's invalidations to the publisher (AppSync
// offers extensions.invalidateSubscriptions to mutations only).
func (r *run) invalidate(route resolver.Route, invalidations []jsresolver.Invalidation) {
	if len(invalidations) == 0 || r.e.publish == nil || route.Type != "Mutation" {
		return
	}
	for _, inv := range invalidations {
		r.e.publish.Invalidate(inv.SubscriptionField, inv.Payload)
	}
}
