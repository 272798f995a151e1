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
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql/introspection"
	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/validator"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/routes"
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
	routes map[string]routes.Route
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
}

// Publisher receives the result of each mutation field that resolved (the
// field's value as the request selected it), for the subscriptions that
// listen to it (package realtime).
type Publisher interface {
	Publish(mutation string, value map[string]any)
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

// WithTimeouts sets the time a request may take (RequestTimeout by default)
// and the time one Lambda invocation may take (routes.FunctionTimeout).
func WithTimeouts(request, function time.Duration) Option {
	return func(e *Executor) { e.requestTimeout, e.functionTimeout = request, function }
}

// WithQueryLimits sets the API's queryDepthLimit and resolverCountLimit
// (routes.QueryDepthLimit and routes.ResolverCountLimit by default).
func WithQueryLimits(depth, resolvers int) Option {
	return func(e *Executor) { e.depthLimit, e.resolverLimit = depth, resolvers }
}

// New returns an Executor for schema whose routed fields (rs) are resolved
// by lambda: root fields and mutations by direct Lambda resolvers, the
// fields of objects by the JavaScript resolver the stack deploys
// (appsyncjs.Child), unless WithDirectResolvers.
func New(schema *ast.Schema, lambda Invoker, rs []routes.Route, opts ...Option) *Executor {
	e := &Executor{schema: schema, lambda: lambda, routes: map[string]routes.Route{},
		requestTimeout: RequestTimeout, functionTimeout: routes.FunctionTimeout,
		depthLimit: routes.QueryDepthLimit, resolverLimit: routes.ResolverCountLimit, child: child()}
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
	data := r.execute()
	sum := meter.Summary()
	resp := Response{Data: data, Errors: r.errors, Extensions: map[string]any{"cost": Cost{
		LambdaInvocations: r.invocations, EarlyReturns: r.earlyReturns, LargestPayloadBytes: r.largest, PayloadBytes: r.bytes,
		DynamoDB: sum.Requests, DynamoDBRoundTrips: meter.RoundTrips(),
		ReadCapacityUnits: sum.Read, WriteCapacityUnits: sum.Write,
	}}}
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
	resolvers    int // resolvers run so far (one per routed field per parent)
	largest      int // bytes of the largest Lambda request or reply
	bytes        int // bytes of every Lambda request and reply
	mu           sync.Mutex
}

func (r *run) execute() any {
	doc, errs := gqlparser.LoadQuery(r.e.schema, r.req.Query)
	if len(errs) > 0 {
		for _, err := range errs {
			ge := Error{Message: err.Message, ErrorType: "GraphQLError"}
			for _, l := range err.Locations {
				ge.Locations = append(ge.Locations, Location{l.Line, l.Column})
			}
			r.errors = append(r.errors, ge)
		}
		return nil
	}
	r.doc = doc
	op := doc.Operations.ForName(r.req.OperationName)
	if op == nil {
		r.errors = append(r.errors, Error{Message: "operation not found: give operationName", ErrorType: "GraphQLError"})
		return nil
	}
	vars, err := validator.VariableValues(r.e.schema, op, r.req.Variables)
	if err != nil {
		r.errors = append(r.errors, Error{Message: err.Error(), ErrorType: "GraphQLError"})
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
		for _, f := range fields { // one after the other, each with its whole subtree
			r.levels([]*task{{typ: root, fields: []collected{f}, out: out}})
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
				switch {
				case !strings.HasPrefix(f.name, "__") && !strings.HasPrefix(t.typ.Name, "__") && !r.authorized(t.typ, f.def):
					n.errored = true
					r.fail(n, "Unauthorized", fmt.Sprintf("Not Authorized to access %s on type %s", f.name, t.typ.Name))
				case f.name == "__typename":
					n.value = t.typ.Name
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
		for k, key := range order {
			wg.Go(func() { results[k] = r.invoke(r.e.routes[key], groups[key]) })
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

type outcome struct {
	data    any
	err     error
	errType string
}

// invoke calls the Lambda for every call of one field: in batches of at most
// MaxBatchSize events when the route batches, otherwise one event a call,
// the invocations running concurrently.
func (r *run) invoke(route routes.Route, calls []call) []outcome {
	if r.ctx.Err() != nil { // past the request's time: no resolver runs, not even one returning early
		out := make([]outcome, len(calls))
		for i := range out {
			out[i] = lambdaError(errExecutionTimeout)
		}
		return out
	}
	if r.e.child != nil && route.EarlyReturn() {
		return r.invokeJS(route, calls)
	}
	out := make([]outcome, len(calls))
	for len(calls) > 0 && calls[len(calls)-1].limited { // the limited calls are the last ones
		out[len(calls)-1] = errResolverLimit
		calls = calls[:len(calls)-1]
	}
	size := route.MaxBatchSize
	var wg sync.WaitGroup
	if size <= 0 {
		for i := range calls {
			wg.Go(func() { out[i] = r.invokeOne(calls[i]) })
		}
		wg.Wait()
		return out
	}
	for start := 0; start < len(calls); start += size {
		chunk := calls[start:min(start+size, len(calls))]
		wg.Go(func() { copy(out[start:], r.invokeBatch(chunk)) })
	}
	wg.Wait()
	return out
}

func (r *run) invokeOne(c call) outcome {
	reply, err := r.invokePayload(r.event(c), -1)
	if err != nil {
		return lambdaError(err)
	}
	return outcome{data: reply[0]}
}

// invokePayload invokes the Lambda with p and decodes its reply: n items for
// a batch, or (n < 0) one value.
func (r *run) invokePayload(p any, n int) ([]any, error) {
	request, err := payload.Marshal(p)
	if err != nil {
		return nil, err
	}
	reply, err := r.call(request)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		var v any
		if len(reply) > 0 {
			if err := json.Unmarshal(reply, &v); err != nil {
				return nil, fmt.Errorf("the Lambda's reply is not JSON: %v", err)
			}
		}
		return []any{v}, nil
	}
	var items []any
	if err := json.Unmarshal(reply, &items); err != nil {
		return nil, fmt.Errorf("the Lambda's reply to a batch is not a JSON array: %v", err)
	}
	if len(items) != n {
		return nil, fmt.Errorf("the Lambda answered %d items for a batch of %d", len(items), n)
	}
	return items, nil
}

func (r *run) invokeBatch(calls []call) []outcome {
	out := make([]outcome, len(calls))
	events := make([]appsync.Event, len(calls))
	for i, c := range calls {
		events[i] = r.event(c)
	}
	items, err := r.invokePayload(events, len(calls))
	for i, it := range items {
		if _, ok := it.(map[string]any); !ok && err == nil {
			err = fmt.Errorf("item %d of the Lambda's reply to a batch is not an object {data, errorMessage, errorType}", i)
		}
	}
	if err != nil {
		// A failed invocation fails every field of the batch, as in AppSync.
		for i := range out {
			out[i] = lambdaError(err)
		}
		return out
	}
	for i, it := range items {
		item := it.(map[string]any)
		if msg, _ := item["errorMessage"].(string); msg != "" {
			errType, _ := item["errorType"].(string)
			out[i] = outcome{err: errors.New(msg), errType: errType}
			continue
		}
		out[i] = outcome{data: item["data"]}
	}
	return out
}

// The errors of a payload over Lambda's limit. Lambda refuses the request
// before the function runs (RequestTooLargeException, HTTP 413), and replaces
// a reply over the limit with a function error (Function.ResponseSizeTooLarge),
// which AppSync reports as an unhandled Lambda error. Both limits are
// payload.MaxBytes here (Lambda's reply limit is 100 bytes larger).
var (
	errRequestTooLarge = messages.InvokeResponse_Error{Type: "Lambda:RequestTooLargeException",
		Message: fmt.Sprintf("Request must be smaller than %d bytes for the InvokeFunction operation", payload.MaxBytes)}
	errReplyTooLarge = messages.InvokeResponse_Error{Type: "Lambda:Unhandled",
		Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", payload.MaxBytes)}
)

// errExecutionTimeout fails the fields not resolved within RequestTimeout.
var errExecutionTimeout = messages.InvokeResponse_Error{Type: "ExecutionTimeout", Message: "Execution timed out."}

// call invokes the Lambda with request as Lambda would: with the function's
// timeout as deadline, refusing a request or a reply over the limit, and
// recording the largest of them.
func (r *run) call(request []byte) ([]byte, error) {
	if r.ctx.Err() != nil {
		return nil, errExecutionTimeout
	}
	r.record(len(request))
	if len(request) > payload.MaxBytes {
		return nil, errRequestTooLarge
	}
	r.mu.Lock()
	r.invocations++
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.ctx, r.e.functionTimeout)
	defer cancel()
	reply, err := r.e.lambda.Invoke(ctx, request)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && r.ctx.Err() == nil {
		// The function ran to its own deadline (not the request's): Lambda
		// would have stopped it and answered this.
		return nil, messages.InvokeResponse_Error{Type: "Lambda:Unhandled",
			Message: fmt.Sprintf("Task timed out after %.2f seconds", r.e.functionTimeout.Seconds())}
	}
	if err != nil {
		return nil, err
	}
	r.record(len(reply))
	if len(reply) > payload.MaxBytes {
		return nil, errReplyTooLarge
	}
	return reply, nil
}

func (r *run) record(size int) {
	r.mu.Lock()
	r.largest = max(r.largest, size)
	r.bytes += size
	r.mu.Unlock()
}

func lambdaError(err error) outcome {
	var ie messages.InvokeResponse_Error
	if errors.As(err, &ie) {
		return outcome{err: errors.New(ie.Message), errType: ie.Type}
	}
	return outcome{err: err, errType: "Lambda:Unhandled"}
}

// authorized reports whether the caller may read field of typ (Authorized).
func (r *run) authorized(typ *ast.Definition, field *ast.FieldDefinition) bool {
	return Authorized(typ, field, r.req.Identity)
}

// Authorized reports whether caller may read field of typ, as AppSync
// decides before any resolver runs: a field's own auth directives, else its
// type's, else the API's default mode (Cognito user pools) alone. The caller
// is an API-key caller without an identity, a user-pool caller with one.
func Authorized(typ *ast.Definition, field *ast.FieldDefinition, caller *appsync.Identity) bool {
	mode := "aws_cognito_user_pools"
	if caller == nil {
		mode = "aws_api_key"
	}
	modes := authModes(field.Directives)
	if modes == nil {
		modes = authModes(typ.Directives)
	}
	if modes == nil {
		return mode == "aws_cognito_user_pools"
	}
	return slices.Contains(modes, mode)
}

// authModes returns the auth directives among ds, nil when there are none.
func authModes(ds ast.DirectiveList) []string {
	var modes []string
	for _, d := range ds {
		switch d.Name {
		case "aws_api_key", "aws_cognito_user_pools", "aws_iam", "aws_oidc", "aws_lambda":
			modes = append(modes, d.Name)
		}
	}
	return modes
}

// errResolverLimit fails the resolvers past the API's resolverCountLimit, as
// AppSync does ("ResolverExecutionLimitReached"; the message is ours).
var errResolverLimit = outcome{err: errors.New("resolver execution limit reached"), errType: "ResolverExecutionLimitReached"}

// overLimit counts the resolvers of a level and, past the limit, fails the
// calls that would exceed it, which are then not invoked.
func (r *run) overLimit(groups map[string][]call, order []string) {
	for _, key := range order {
		calls := groups[key]
		room := max(r.e.resolverLimit-r.resolvers, 0)
		r.resolvers += len(calls)
		for i := room; i < len(calls); i++ {
			calls[i].limited = true
		}
	}
}

// depth returns how many levels of fields sel nests, fragments included (a
// root field is level 1). Merging fields deepens nothing, so it is the
// deepest of its parts; a named fragment's depth is computed once.
func (r *run) depth(sel ast.SelectionSet, fragments map[string]int) int {
	deepest := 0
	for _, s := range sel {
		switch x := s.(type) {
		case *ast.Field:
			if r.included(x.Directives) {
				deepest = max(deepest, 1+r.depth(x.SelectionSet, fragments))
			}
		case *ast.InlineFragment:
			if r.included(x.Directives) {
				deepest = max(deepest, r.depth(x.SelectionSet, fragments))
			}
		case *ast.FragmentSpread:
			if !r.included(x.Directives) {
				continue
			}
			d, ok := fragments[x.Name]
			if fd := r.doc.Fragments.ForName(x.Name); !ok && fd != nil {
				fragments[x.Name] = 0 // validation refuses cycles; this stops one all the same
				d = r.depth(fd.SelectionSet, fragments)
				fragments[x.Name] = d
			}
			deepest = max(deepest, d)
		}
	}
	return deepest
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
	list, _ := json.Marshal(r.selectionList(c.field.field.SelectionSet))
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
			SelectionSetGraphQL: selectionGraphQL(c.field.field.SelectionSet),
			Variables:           r.varsJSON,
		},
	}
}

// complete sets n to v as a value of type typ, returning the objects whose
// fields are to be resolved at the next level.
func (r *run) complete(n *node, typ *ast.Type, v any, f collected) []*task {
	if v == nil {
		n.value = nil
		return nil
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			r.fail(n, "GraphQLError", fmt.Sprintf("expected a list for %s", f.name))
			n.errored = true
			return nil
		}
		items := make([]*node, len(list))
		var next []*task
		for i, item := range list {
			items[i] = &node{nonNull: typ.Elem.NonNull, path: appendPath(n.path, i), field: f, parent: n.parent}
			next = append(next, r.complete(items[i], typ.Elem, item, f)...)
		}
		n.value = items
		return next
	}
	def := r.e.schema.Types[typ.NamedType]
	if def.IsLeafType() {
		n.value = v
		return nil
	}
	t := &task{typ: def, fields: r.collect(def, f.field.SelectionSet), out: &object{}, path: n.path}
	switch obj := v.(type) {
	case map[string]any:
		t.source = obj
	default:
		if !isIntrospection(obj) {
			r.fail(n, "GraphQLError", fmt.Sprintf("expected an object for %s", f.name))
			n.errored = true
			return nil
		}
		t.intro = obj
	}
	n.value = t.out
	return []*task{t}
}

func (r *run) fail(n *node, errType, message string) {
	e := Error{Message: message, ErrorType: errType, Path: n.path}
	if pos := n.field.field.Position; pos != nil {
		e.Locations = []Location{{pos.Line, pos.Column}}
	}
	r.mu.Lock()
	r.errors = append(r.errors, e)
	r.mu.Unlock()
}

// finish turns the result tree into JSON values and applies null
// propagation: a null in a non-null position makes its parent null, up to the
// nearest nullable field. invalid reports a null the parent must absorb.
func (r *run) finish(n *node) (value any, invalid bool) {
	switch v := n.value.(type) {
	case nil:
		if n.nonNull && !n.errored {
			r.fail(n, "GraphQLError", fmt.Sprintf("Cannot return null for non-nullable type: '%s' within parent '%s' (%s)",
				n.field.def.Type.Name(), n.parent, pathString(n.path)))
		}
		return nil, n.nonNull
	case []*node:
		out := make([]any, len(v))
		for i, item := range v {
			val, bad := r.finish(item)
			if bad {
				return nil, n.nonNull
			}
			out[i] = val
		}
		return out, false
	case *object:
		for _, key := range v.keys {
			val, bad := r.finish(v.fields[key])
			if bad {
				return nil, n.nonNull
			}
			v.values = append(v.values, val)
		}
		return v, false
	default:
		return v, false
	}
}

// node is one value of the response being built.
type node struct {
	value   any // nil, a leaf value, []*node, *object
	nonNull bool
	errored bool // an error was reported for this null already
	path    []any
	field   collected
	parent  string
}

// object is a response object: fields in selection order.
type object struct {
	keys   []string
	fields map[string]*node
	values []any // filled by finish
}

func (o *object) set(key string, n *node) {
	if o.fields == nil {
		o.fields = map[string]*node{}
	}
	if _, ok := o.fields[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.fields[key] = n
}

// MarshalJSON writes the object's fields in selection order.
func (o *object) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		vb, err := json.Marshal(o.values[i])
		if err != nil {
			return nil, err
		}
		buf = append(buf, vb...)
	}
	return append(buf, '}'), nil
}

func appendPath(path []any, elem any) []any {
	out := make([]any, len(path), len(path)+1)
	copy(out, path)
	return append(out, elem)
}

func pathString(path []any) string {
	s := ""
	for _, p := range path {
		s += "/" + fmt.Sprint(p)
	}
	return s
}
