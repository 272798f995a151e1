// Package executor runs GraphQL requests the way AWS AppSync runs them for
// this API, so the API can be used offline.
//
// It parses and validates a request against the schema, then resolves it
// level by level. Root fields and mutations are direct Lambda resolvers:
// they invoke the Lambda handler with an event built as AppSync builds it
// (arguments, identity, the parent's whole result as source, request
// headers, info with selectionSetList and selectionSetGraphQL, variables,
// stash, prev). The fields of objects run the JavaScript resolver the stack
// deploys (appsyncjs/child.js, see package jsresolver): its request handler
// returns early or gives the Lambda payload, sent in batches of at most the
// route's batch size, once per level per field; with WithDirectResolvers
// they are direct resolvers too. Other fields are read from their parent's
// object. Mutations run one after the other. Errors carry message,
// errorType, path and locations, and nulls propagate as the GraphQL
// specification says.
package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/jsresolver"
)

// Invoker is the Lambda function: lambda.Handler satisfies it.
type Invoker interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Executor runs requests against one schema and one Lambda.
type Executor struct {
	schema *ast.Schema
	lambda Invoker
	routes map[string]resolver.Route
	// requestTimeout is AppSync's limit on a GraphQL request; functionTimeout
	// the Lambda's on an invocation.
	requestTimeout, functionTimeout time.Duration
	// depthLimit and resolverLimit are the API's queryDepthLimit and
	// resolverCountLimit.
	depthLimit, resolverLimit int
	intro                     *introspection.Schema // the __schema object
	types                     map[string]map[string]any
	// child is the JavaScript resolver of the fields whose route says
	// EarlyReturn, nil when every field has a direct Lambda resolver.
	child *jsresolver.Resolver
	// publish receives each mutation's result, for subscriptions.
	publish Publisher
	// documented gives resolvers AppSync's inputs as AWS documents them
	// (WithDocumentedInputs).
	documented bool
	// reading is how info describes a field merged from several
	// occurrences (WithSelectionReading).
	reading appsync.Reading
}

// Publisher receives the result of each mutation field that resolved (the
// field's value as the request selected it), for the subscriptions that
// listen to it (package realtime).
type Publisher interface {
	Publish(mutation string, value map[string]any)
	// Invalidate ends the subscriptions to the subscription field whose
	// invalidation filter payload matches (a mutation's
	// extensions.invalidateSubscriptions), returning how many.
	Invalidate(subscriptionField string, payload map[string]any) int
}

// WithPublisher hands every mutation's result to p.
func WithPublisher(p Publisher) Option { return func(e *Executor) { e.publish = p } }

// RequestTimeout is AppSync's limit on one GraphQL request.
const RequestTimeout = 30 * time.Second

// Option configures an Executor.
type Option func(*Executor)

// WithDocumentedInputs gives every resolver the inputs AWS documents, where
// the default reading is graphql-js's: info.variables holds only the
// variables the request passed (no operation defaults), and ctx.args (and a
// direct resolver's arguments) only the arguments the query wrote, without
// the schema's defaults (aws-appsync-community#59). An argument naming a
// variable left out without a default is absent either way. The Lambda and
// appsyncjs/child.js must answer the same under both.
func WithDocumentedInputs() Option { return func(e *Executor) { e.documented = true } }

// WithSelectionReading gives every resolver, in info.selectionSetGraphQL
// and info.selectionSetList, the selection of a field merged from several
// occurrences as AppSync writing it under r: every occurrence's
// (appsync.EveryOccurrence, the default), or the first occurrence's
// alone (appsync.FirstOccurrence, as Amplify's AppSync simulator writes
// both). AWS documents neither; the Lambda and appsyncjs/child.js must
// answer the same under both.
func WithSelectionReading(r appsync.Reading) Option { return func(e *Executor) { e.reading = r } }

// WithTimeouts sets the time a request may take (RequestTimeout by default)
// and the time one Lambda invocation may take (resolver.FunctionTimeout).
func WithTimeouts(request, function time.Duration) Option {
	return func(e *Executor) { e.requestTimeout, e.functionTimeout = request, function }
}

// WithQueryLimits sets the API's queryDepthLimit and resolverCountLimit
// (resolver.QueryDepthLimit and resolver.ResolverCountLimit by default).
func WithQueryLimits(depth, resolvers int) Option {
	return func(e *Executor) { e.depthLimit, e.resolverLimit = depth, resolvers }
}

// New returns an Executor for schema whose routed fields (rs) are resolved
// by lambda: root fields and mutations by direct Lambda resolvers, the
// fields of objects by the JavaScript resolver the stack deploys
// (appsyncjs.Child), unless WithDirectResolvers.
func New(schema *ast.Schema, lambda Invoker, rs []resolver.Route, opts ...Option) *Executor {
	e := &Executor{schema: schema, lambda: lambda, routes: map[string]resolver.Route{},
		requestTimeout: RequestTimeout, functionTimeout: resolver.FunctionTimeout,
		depthLimit: resolver.QueryDepthLimit, resolverLimit: resolver.ResolverCountLimit, child: child(),
		reading: appsync.EveryOccurrence}
	for _, r := range rs {
		e.routes[r.Key()] = r
	}
	for _, o := range opts {
		o(e)
	}
	e.intro = introspection.WrapSchema(schema)
	return e
}

// Request is a GraphQL request and who makes it.
type Request struct {
	Query         string         `json:"query"`
	OperationName string         `json:"operationName,omitempty"`
	Variables     map[string]any `json:"variables,omitempty"`

	// Identity is the caller as AppSync describes it; nil for API key.
	Identity *appsync.Identity `json:"-"`
	// Headers are the HTTP request headers, passed on in events.
	Headers map[string]string `json:"-"`
	// Plan asks for the request's plan in extensions.plan (lambda/resolver/answers.go): the
	// local AppSync's header x-local-plan: 1.
	Plan bool `json:"-"`
}

// Response is a GraphQL response. Extensions["cost"] reports the Lambda
// invocations and the DynamoDB requests and capacity the request cost.
type Response struct {
	Data       any            `json:"data"`
	Errors     []Error        `json:"errors,omitempty"`
	Extensions map[string]any `json:"extensions,omitempty"`
}

// Error is a GraphQL error as AppSync reports it.
type Error struct {
	Message   string     `json:"message"`
	ErrorType string     `json:"errorType,omitempty"`
	Path      []any      `json:"path,omitempty"`
	Locations []Location `json:"locations,omitempty"`
}

// Location is a position in the request's query text.
type Location struct {
	Line   int `json:"line"`
	Column int `json:"column"`
}

// Cost is what one request cost.
type Cost struct {
	LambdaInvocations int `json:"lambdaInvocations"`
	// EarlyReturns counts the fields whose JavaScript resolver returned the
	// parent's answer, with no invocation.
	EarlyReturns int `json:"earlyReturns"`
	// LargestPayloadBytes is the largest Lambda request or reply the request
	// caused, in bytes; Lambda refuses either over payload.MaxBytes.
	LargestPayloadBytes int `json:"largestPayloadBytes"`
	// PayloadBytes is every Lambda request and reply, added up: the bytes
	// between AppSync and the Lambda.
	PayloadBytes int            `json:"payloadBytes"`
	DynamoDB     map[string]int `json:"dynamodb"`
	// DynamoDBRoundTrips is the longest chain of DynamoDB requests of the
	// request in which each waited for the one before (cost.Meter.RoundTrips).
	DynamoDBRoundTrips int     `json:"dynamodbRoundTrips"`
	ReadCapacityUnits  float64 `json:"readCapacityUnits"`
	WriteCapacityUnits float64 `json:"writeCapacityUnits"`
}

// Execute runs req. DynamoDB calls made through ctx by a handler in this
// process (with the cost middleware) are counted in the response's cost.
//
// As in AppSync, the request has RequestTimeout: fields not resolved by then
// fail with ExecutionTimeout. Each invocation has the function's timeout as
// its context's deadline, as a Lambda invocation has.
func (e *Executor) Execute(ctx context.Context, req Request) Response {
	ctx, cancel := context.WithTimeout(ctx, e.requestTimeout)
	defer cancel()
	ctx, meter := cost.WithMeter(ctx)
	r := &run{e: e, ctx: ctx, req: req}
	if req.Plan {
		r.plan = newPlanner()
	}
	data := r.execute()
	sum := meter.Summary()
	resp := Response{Data: data, Errors: r.errors, Extensions: map[string]any{"cost": Cost{
		LambdaInvocations: r.invocations, EarlyReturns: r.earlyReturns, LargestPayloadBytes: r.largest, PayloadBytes: r.bytes,
		DynamoDB: sum.Requests, DynamoDBRoundTrips: costdetail.RoundTrips(meter.Calls()),
		ReadCapacityUnits: sum.Read, WriteCapacityUnits: sum.Write,
	}}}
	if r.plan != nil {
		resp.Extensions["plan"] = r.plan.finish(meter)
	}
	return resp
}

// run is the state of one request.
type run struct {
	e           *Executor
	ctx         context.Context
	req         Request
	doc         *ast.QueryDocument
	vars        map[string]any
	varsJSON    json.RawMessage
	errors      []Error
	invocations int
	// earlyReturns counts the JavaScript resolvers that returned early.
	earlyReturns int
	resolvers    int      // resolvers run so far (one per routed field per parent)
	largest      int      // bytes of the largest Lambda request or reply
	bytes        int      // bytes of every Lambda request and reply
	plan         *planner // nil unless the request asks for its plan
	mu           sync.Mutex
}

// noOperation says why req names no operation of doc to run.
func noOperation(doc *ast.QueryDocument, req Request) string {
	switch {
	case strings.TrimSpace(req.Query) == "":
		return `the request has no query: send {"query": "{ ... }"}`
	case req.OperationName != "":
		return fmt.Sprintf("the document has no operation named %q", req.OperationName)
	case len(doc.Operations) == 0:
		return "the document has fragments and no operation to run"
	default:
		return fmt.Sprintf("the document has %d operations: name the one to run in operationName", len(doc.Operations))
	}
}

func (r *run) execute() any {
	doc, errs := Parse(r.e.schema, r.req.Query)
	if len(errs) > 0 {
		for _, err := range errs {
			r.errors = append(r.errors, refusal(err))
		}
		return nil
	}
	r.doc = doc
	op := doc.Operations.ForName(r.req.OperationName)
	if op == nil {
		r.errors = append(r.errors, Error{Message: noOperation(doc, r.req)})
		return nil
	}
	vars, verr := r.e.coercer().variables(op, r.req.Variables)
	if verr != nil {
		r.errors = append(r.errors, *verr)
		return nil
	}
	r.vars = vars
	if r.e.documented {
		passed := map[string]any{}
		for name, v := range vars {
			if _, ok := r.req.Variables[name]; ok {
				passed[name] = v
			}
		}
		vars = passed
	}
	r.varsJSON, _ = json.Marshal(vars)

	var root *ast.Definition
	switch op.Operation {
	case ast.Query:
		root = r.e.schema.Query
	case ast.Mutation:
		root = r.e.schema.Mutation
	default:
		r.errors = append(r.errors, Error{Message: "subscriptions are served over the real-time protocol, at /graphql/realtime", ErrorType: "UnsupportedOperation"})
		return nil
	}
	if depth := r.depth(op.SelectionSet, map[string]int{}); depth > r.e.depthLimit {
		// Refused before any resolver runs. The wording is graphql-java's (the
		// engine AppSync's errors come from); AppSync's own is unverified.
		r.errors = append(r.errors, Error{Message: fmt.Sprintf("maximum query depth exceeded %d > %d", depth, r.e.depthLimit),
			ErrorType: "QueryDepthLimitExceeded"})
		return nil
	}
	out := &object{}
	fields := r.collect(root, op.SelectionSet)
	if op.Operation == ast.Mutation {
		// One after the other, each with its whole subtree; a field whose
		// error nulls data ends the operation: no later field runs (as
		// graphql-js and graphql-java execute a mutation).
		for _, f := range fields {
			r.levels([]*task{{typ: root, fields: []collected{f}, out: out}})
			if nullsParent(out.fields[f.key]) {
				break
			}
		}
	} else {
		r.levels([]*task{{typ: root, fields: fields, out: out}})
	}
	data, invalid := r.finish(&node{value: out, nonNull: true})
	if invalid {
		return nil
	}
	if root, ok := data.(*object); ok && op.Operation == ast.Mutation && r.e.publish != nil {
		r.publish(fields, root)
	}
	return data
}

// publish hands each mutation field's result (an object, as the request
// selected it) to the publisher.
func (r *run) publish(fields []collected, root *object) {
	for _, f := range fields {
		i := slices.Index(root.keys, f.key)
		if i < 0 || i >= len(root.values) {
			continue
		}
		b, err := json.Marshal(root.values[i])
		var value map[string]any
		if err != nil || json.Unmarshal(b, &value) != nil || value == nil {
			continue
		}
		r.e.publish.Publish(f.name, value)
	}
}

// task is an object whose fields are to be resolved.
type task struct {
	typ    *ast.Definition
	fields []collected
	source map[string]any // the object as its resolver returned it; nil at the root
	intro  any            // or the introspection value it is
	out    *object
	path   []any
}

// call is a routed field of one object, waiting for its invocation.
type call struct {
	task    *task
	field   collected
	node    *node
	limited bool // past the resolver count limit: fails without an invocation
}

// key is the call's field, "Type.field".
func (c call) key() string { return c.task.typ.Name + "." + c.field.name }

// levels resolves tasks breadth first: all the routed fields of one level are
// invoked together, grouped by field, before the next level starts.
func (r *run) levels(tasks []*task) {
	for len(tasks) > 0 {
		var next []*task
		groups := map[string][]call{}
		var order []string
		for _, t := range tasks {
			for _, f := range t.fields {
				n := &node{nonNull: f.def.Type.NonNull, path: appendPath(t.path, f.key), field: f, parent: t.typ.Name}
				t.out.set(f.key, n)
				key := t.typ.Name + "." + f.name
				nullArgument := r.e.coercer().nullArgument(f.field, r.vars)
				switch {
				case !strings.HasPrefix(f.name, "__") && !strings.HasPrefix(t.typ.Name, "__") && !r.authorized(t.typ, f.def):
					n.errored = true
					r.fail(n, "Unauthorized", fmt.Sprintf("Not Authorized to access %s on type %s", f.name, t.typ.Name))
				case f.name == "__typename":
					n.value = t.typ.Name
				case nullArgument != "": // not resolved: CoerceArgumentValues fails
					n.errored = true
					r.fail(n, "ValidationError", nullArgument)
				case t.typ == r.e.schema.Query && f.name == "__schema":
					next = append(next, r.complete(n, f.def.Type, r.e.intro, f)...)
				case t.typ == r.e.schema.Query && f.name == "__type":
					name, _ := f.field.ArgumentMap(r.vars)["name"].(string)
					next = append(next, r.complete(n, f.def.Type, r.e.schemaType(name), f)...)
				default:
					if _, routed := r.e.routes[key]; routed {
						if _, seen := groups[key]; !seen {
							order = append(order, key)
						}
						groups[key] = append(groups[key], call{task: t, field: f, node: n})
						continue
					}
					v := t.source[f.name]
					if t.intro != nil {
						v = member(t.intro, f.name, f.field.ArgumentMap(r.vars))
					}
					next = append(next, r.complete(n, f.def.Type, v, f)...)
				}
			}
		}
		r.overLimit(groups, order)
		// The fields of a level are resolved at the same time, as in AppSync.
		results := make([][]outcome, len(order))
		var wg sync.WaitGroup
		branch := cost.Together(r.ctx) // the fields of a level wait for none of the others
		for k, key := range order {
			ctx := branch()
			wg.Go(func() { results[k] = r.invoke(ctx, r.e.routes[key], groups[key]) })
		}
		wg.Wait()
		for k, key := range order {
			results := results[k]
			for i, c := range groups[key] {
				res := results[i]
				if res.err != nil {
					c.node.errored = true
					r.fail(c.node, res.errType, res.err.Error())
					continue
				}
				next = append(next, r.complete(c.node, c.field.def.Type, res.data, c.field)...)
			}
		}
		tasks = next
	}
}

// event builds the AppSync event for one call.
func (r *run) event(c call) appsync.Event {
	args, _ := payload.Marshal(r.args(c.field))
	source := json.RawMessage("null")
	if c.task.source != nil {
		source, _ = payload.Marshal(c.task.source)
	}
	headers := r.req.Headers
	if headers == nil {
		headers = map[string]string{}
	}
	request, _ := json.Marshal(map[string]any{"headers": headers, "domainName": nil})
	list, _ := json.Marshal(r.selectionList(r.described(c.field)))
	return appsync.Event{
		Arguments: args,
		Identity:  r.req.Identity,
		Source:    source,
		Request:   request,
		Prev:      json.RawMessage("null"),
		Stash:     json.RawMessage("{}"),
		Info: appsync.Info{
			FieldName:           c.field.name,
			ParentTypeName:      c.task.typ.Name,
			SelectionSetList:    list,
			SelectionSetGraphQL: selectionGraphQL(r.described(c.field)),
			Variables:           r.varsJSON,
		},
	}
}
