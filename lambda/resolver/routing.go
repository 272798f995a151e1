package resolver

import (
	"strings"
	"time"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// What a route is: a field the Lambda resolves, how AppSync batches it and
// what shape its value has; the table the routes are looked up in, and the
// byte budgets a route's batch size gives. The limits the stack sets on the
// API are here too.

// Limits on hostile queries, which the stack sets on the API and the local
// AppSync enforces; how they were chosen is in docs/limits.md.
const (
	QueryDepthLimit    = 15
	ResolverCountLimit = 5000
)

// FunctionTimeout is the Lambda function's timeout, as the stack deploys it and
// as the local AppSync gives each invocation. It stays well under AppSync's
// 30 s request limit, so that a slow invocation fails as a Lambda error
// AppSync can report.
const FunctionTimeout = 10 * time.Second

// Route is a field resolved by the Lambda.
type Route struct {
	Type  string // parent type name, such as "Post"
	Field string // field name, such as "author"
	// MaxBatchSize is AppSync's maxBatchSize for the resolver: 0 invokes the
	// Lambda once per parent; N > 0 sends up to N parents in one invocation.
	MaxBatchSize int
	// Returns is the object type of the field's value: the type itself
	// (Post.author: User), its elements (Query.posts: Post) or its items
	// (Post.comments: Comment), as Shape says.
	Returns string
	Shape   Shape
	// Member, for a Connection, is the member of each item holding the
	// object ("" when the items are objects); for Shape One, the member of
	// its value holding an object AppSync reads from it, unrouted.
	Member string
	// Defaults are the schema's default values of the field's arguments
	// (enum values as strings): an argument equal to its default asks the
	// same as an argument left out.
	Defaults map[string]any
	// Invalidates gives a mutation the resolver that ends subscriptions
	// (appsyncjs/root.js): the Lambda answers {"value", "invalidations":
	// [{subscriptionField, payload}]}.
	Invalidates bool

	table        *Routes // the table it was found in
	defaultsJSON []byte  // Defaults, encoded once
}

// Shape is how a field's value holds its objects.
type Shape int

const (
	One        Shape = iota // an object or null
	List                    // a list of objects, some perhaps null
	Connection              // {items: [objects], nextToken}
)

// Key returns "Type.field", the key AppSync events are routed on.
func (r Route) Key() string { return r.Type + "." + r.Field }

// EarlyReturn reports whether the field's resolver is the JavaScript one
// that returns its parent's answer (every field of an object type), rather
// than a direct Lambda resolver or appsyncjs/root.js.
func (r Route) EarlyReturn() bool { return !r.root() }

// Subscribes reports whether the field is a subscription, resolved as a
// subscription to it starts (appsyncjs/root.js).
func (r Route) Subscribes() bool { return r.Type == "Subscription" }

// root reports whether the field is one of a root type's.
func (r Route) root() bool { return r.Type == "Query" || r.Type == "Mutation" || r.Subscribes() }

// Routes is the routed fields an API serves: the core's and those of each
// feature wired in. It is the one list the Lambda's router, the stack's
// resolvers and the local AppSync read.
type Routes struct {
	all    []Route
	byName map[name]*Route // into all
}

// child returns the route of the field of the route's objects (Returns)
// and whether there is one, in the table the route was found in.
func (r Route) child(field string) (Route, bool) {
	if r.table == nil {
		return Route{}, false
	}
	return r.table.of(r.Returns, field)
}

// All returns every routed field, the core's first.
func (t *Routes) All() []Route { return t.all }

// Find returns the route for "Type.field" and whether there is one.
func (t *Routes) Find(key string) (Route, bool) {
	if r := t.entry(key); r != nil {
		return *r, true
	}
	return Route{}, false
}

// of returns the route of the field of the type and whether there is one.
func (t *Routes) of(typ, field string) (Route, bool) {
	if r := t.byName[name{typ, field}]; r != nil {
		return *r, true
	}
	return Route{}, false
}

// entry is Find's route as the table holds it (nil when there is none),
// to share without a copy, never to change.
func (t *Routes) entry(key string) *Route {
	typ, field, _ := strings.Cut(key, ".")
	return t.byName[name{typ, field}]
}

type name struct{ typ, field string }

// batchItemEnvelope is what a batch reply adds around each item's data:
// {"data":...,"errorMessage":"...","errorType":"..."} and a comma.
const batchItemEnvelope = 256

// replyBudget is the most bytes the answer to one event of the field may take:
// the whole payload for a field that is not batched, and an even share of it
// for a batched one, so that a full batch of full answers fits.
func (r Route) replyBudget() int {
	if r.MaxBatchSize <= 0 {
		return payload.MaxBytes
	}
	return payload.MaxBytes/r.MaxBatchSize - batchItemEnvelope
}

// sourceBudget is the most bytes an object of type typ may take (prefetched
// children included) when a resolver returns it: a full batch of its routed
// children's events, each with its EventReserve, must fit one payload.
func (t *Routes) sourceBudget(typ string) int {
	budget := payload.MaxBytes
	for _, r := range t.all {
		if r.Type == typ && r.MaxBatchSize > 0 {
			budget = min(budget, payload.MaxBytes/r.MaxBatchSize-payload.EventReserve)
		}
	}
	return budget
}
