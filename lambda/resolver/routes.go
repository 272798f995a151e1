package resolver

// The route table: the GraphQL fields resolved by the Lambda, with each
// field's AppSync batch size: the core's (CoreRoutes), to which each feature
// wired in adds its own, joined in Routes. The Lambda's router (fields.go),
// the CDK stack's resolvers and the local AppSync executor all read the
// table, and tests fail when any of them diverges from it or from the
// schema.

import (
	"strings"
	"time"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// Limits on hostile queries, which the stack sets on the API and the local
// AppSync enforces.
//
// QueryDepthLimit: the seed's query (user { posts { items { comments { items
// { author { name } } } } } }) is 7 levels deep; following the graph one hop
// further, a comment's author's posts' comments' authors (post { comments {
// items { author { posts { items { comments { items { author { name } } } } }
// } } } }) is 10. The introspection query GraphQL clients send (graphql-js's
// getIntrospectionQuery, nine levels of ofType) is 15, and AppSync does not
// say whether it counts introspection, so 15 keeps GraphiQL and code
// generators working; a fan-out nesting post { comments { items { post ... }
// } } passes it in five hops.
//
// ResolverCountLimit: resolvers run per parent, so the count is about the
// data: 32 full posts with 100 comments each and their authors (posts(ids:
// 32 ids) { author comments(limit: 100) { items { author } } }) is 1 + 32 +
// 32 + 3,200 = 3,265 resolvers, one page of 100 posts with 20 comments each
// and their authors 2,102, the seed's query on make dev's data 422; 5,000
// allows them and refuses the fan-outs. A client asking for more (100 posts
// x 100 comments with authors is 10,102, over AppSync's own maximum of
// 10,000 too) gets ResolverExecutionLimitReached on the fields past the
// count and pages instead.
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
	// Member, for a Connection, is the member of each item that holds the
	// object (Query.trending's TrendingPost.post: a Post); "" when the
	// items are the objects. For a field of Shape One, it is the member of
	// its value that holds an object AppSync reads from it, unrouted
	// (Mutation.pushFeed's FeedPush.post).
	Member string
	// Defaults are the schema's default values of the field's arguments
	// (enum values as strings): an argument equal to its default asks the
	// same as an argument left out.
	Defaults map[string]any
	// Invalidates, for a mutation, gives it the JavaScript resolver that
	// ends subscriptions (appsyncjs/root.js): the Lambda's answer is
	// {"value": the field's value, "invalidations": [{subscriptionField,
	// payload}]}, and the resolver asks AppSync to end the subscriptions
	// each invalidation's payload matches.
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

// EarlyReturn reports whether the field's resolver is the JavaScript
// resolver (APPSYNC_JS) that returns its parent's answer for the field when
// the parent carries one and invokes the Lambda otherwise: every field of an
// object type. Root fields and mutations have direct Lambda resolvers, but
// for a routed subscription (Subscribes) and a mutation that Invalidates,
// which have the JavaScript root resolver (appsyncjs/root.js).
func (r Route) EarlyReturn() bool { return !r.root() }

// Subscribes reports whether the field is a subscription, resolved as a
// subscription to it starts (appsyncjs/root.js).
func (r Route) Subscribes() bool { return r.Type == "Subscription" }

// root reports whether the field is one of a root type's.
func (r Route) root() bool { return r.Type == "Query" || r.Type == "Mutation" || r.Subscribes() }

// Batch sizes. A batch is one Lambda payload, limited to 6 MB both ways
// (payload.MaxBytes), and every event of it carries its parent's object as
// source (without the answers on it, which the JavaScript resolver leaves
// out with the request headers, the selection list and the identity's
// claims: a lean event is its source plus about 200 bytes, and
// payload.EventReserve allows 8 kB). Where a parent's invocation has not
// answered a child, the child's batch size decides how many invocations a
// level costs; each is chosen so that one level of the seed's query on make
// dev's data (one user, 11 posts, 220 comments) is one invocation where the
// payload allows, measured in local/executor's TestLeanBatchesOfTheSeedQuery:
//
//   - Comment.author, 250: the seed's 220 comments in one batch. The largest
//     comment (12,276 bytes of JSON) plus EventReserve, 250 times, is 5.1 MB,
//     and 250 of the largest users (7,116 bytes) 1.8 MB.
//   - Post.author and Comment.post, 32: a post is the largest object (up to
//     121,476 bytes); 32 leave 188 kB per post as source (SourceBudget) and
//     196 kB per post answered (ReplyBudget). The seed's 11 posts fit.
//   - Connections, 20: one Query per parent, each page up to 313 kB; the
//     default page of 20 posts fits one batch of Post.comments.
//   - Follow's users, 100: Follow is small, but these fields only follow
//     the follow and unfollow mutations, one event each. Like.user, 100: a
//     full page of likes in one invocation.
//   - Post.likedByMe, 32, as Post.author: a page of posts in one invocation,
//     one BatchGetItem.
const (
	commentAuthorBatch = 250
	lookupBatch        = 100
	postBatch          = 32
	connectionBatch    = 20
)

// CoreRoutes lists the routed fields of the core API; a feature's are its
// own (feed.Routes, trending.Routes), and Routes joins them. Root fields (Query, Mutation)
// are never batched by AppSync.
var CoreRoutes = []Route{
	{Type: "Query", Field: "user", Returns: "User"},
	{Type: "Query", Field: "post", Returns: "Post"},
	{Type: "Query", Field: "posts", Returns: "Post", Shape: List},
	{Type: "Query", Field: "me", Returns: "User"},

	{Type: "User", Field: "posts", MaxBatchSize: connectionBatch, Returns: "Post", Shape: Connection,
		Defaults: map[string]any{"order": "NEWEST_FIRST", "status": "PUBLISHED"}},
	{Type: "User", Field: "comments", MaxBatchSize: connectionBatch, Returns: "Comment", Shape: Connection,
		Defaults: map[string]any{"order": "NEWEST_FIRST"}},
	{Type: "User", Field: "following", MaxBatchSize: connectionBatch, Returns: "User", Shape: Connection},
	{Type: "User", Field: "followers", MaxBatchSize: connectionBatch, Returns: "User", Shape: Connection},

	{Type: "Post", Field: "author", MaxBatchSize: postBatch, Returns: "User"},
	{Type: "Post", Field: "comments", MaxBatchSize: connectionBatch, Returns: "Comment", Shape: Connection,
		Defaults: map[string]any{"order": "OLDEST_FIRST"}},
	{Type: "Post", Field: "likes", MaxBatchSize: connectionBatch, Returns: "Like", Shape: Connection},
	{Type: "Post", Field: "likedByMe", MaxBatchSize: postBatch, Returns: "Boolean"},

	{Type: "Like", Field: "user", MaxBatchSize: lookupBatch, Returns: "User"},

	{Type: "Comment", Field: "author", MaxBatchSize: commentAuthorBatch, Returns: "User"},
	{Type: "Comment", Field: "post", MaxBatchSize: postBatch, Returns: "Post"},

	{Type: "Follow", Field: "follower", MaxBatchSize: lookupBatch, Returns: "User"},
	{Type: "Follow", Field: "followed", MaxBatchSize: lookupBatch, Returns: "User"},

	{Type: "Mutation", Field: "createUser", Returns: "User"},
	{Type: "Mutation", Field: "updateUser", Returns: "User"},
	{Type: "Mutation", Field: "createPost", Returns: "Post"},
	{Type: "Mutation", Field: "updatePost", Returns: "Post"},
	{Type: "Mutation", Field: "deletePost", Returns: "Post"},
	{Type: "Mutation", Field: "publishPost", Returns: "Post"},
	{Type: "Mutation", Field: "createComment", Returns: "Comment"},
	{Type: "Mutation", Field: "deleteComment", Returns: "Comment"},
	{Type: "Mutation", Field: "follow", Returns: "Follow"},
	{Type: "Mutation", Field: "unfollow", Returns: "Follow"},
	{Type: "Mutation", Field: "likePost", Returns: "Post"},
	{Type: "Mutation", Field: "unlikePost", Returns: "Post"},
}

// Routes is the routed fields an API serves: the core's and those of each
// feature wired in. It is the one list the Lambda's router, the stack's
// resolvers and the local AppSync read.
type Routes struct {
	all    []Route
	byName map[name]*Route // into all
}

// NewRoutes returns the table of CoreRoutes and the features' routes. A field
// routed twice panics: that is a build error, which the tests catch.
func NewRoutes(features ...[]Route) *Routes {
	t := &Routes{byName: map[name]*Route{}}
	for _, rs := range append([][]Route{CoreRoutes}, features...) {
		for _, r := range rs {
			r.table = t
			if len(r.Defaults) > 0 {
				r.defaultsJSON, _ = payload.Marshal(r.Defaults) // a map of strings to JSON values always encodes
			}
			t.all = append(t.all, r)
		}
	}
	for i, r := range t.all {
		if _, dup := t.byName[name{r.Type, r.Field}]; dup {
			panic("resolver: " + r.Key() + " is routed twice")
		}
		t.byName[name{r.Type, r.Field}] = &t.all[i]
	}
	return t
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

// sourceBudget is the most bytes an object of the GraphQL type typ may take
// when a resolver returns it (prefetched children included): AppSync sends it
// as source in the event of each of its routed child fields, and a full batch
// of such events, each with its EventReserve, must fit in one payload. A type
// without routed children has the whole payload.
func (t *Routes) sourceBudget(typ string) int {
	budget := payload.MaxBytes
	for _, r := range t.all {
		if r.Type == typ && r.MaxBatchSize > 0 {
			budget = min(budget, payload.MaxBytes/r.MaxBatchSize-payload.EventReserve)
		}
	}
	return budget
}
