// Package routes is the one list of GraphQL fields resolved by the Lambda,
// with each field's AppSync batch size. The Lambda's router, the CDK stack's
// resolvers and the local AppSync executor all read it, and tests fail when
// any of them diverges from it.
package routes

// Route is a field with a direct Lambda resolver.
type Route struct {
	Type  string // parent type name, such as "Post"
	Field string // field name, such as "author"
	// MaxBatchSize is AppSync's maxBatchSize for the resolver: 0 invokes the
	// Lambda once per parent; N > 0 sends up to N parents in one invocation.
	MaxBatchSize int
}

// Key returns "Type.field", the key AppSync events are routed on.
func (r Route) Key() string { return r.Type + "." + r.Field }

// Batch sizes. Point lookups collapse a whole batch into BatchGetItem calls of
// 100 keys, so their batches are large; connection fields run one Query per
// parent, so their batches are smaller to keep one invocation's fan-out and
// response size bounded.
const (
	lookupBatch     = 100
	connectionBatch = 20
)

// All lists every routed field. Root fields (Query, Mutation) are never
// batched by AppSync.
var All = []Route{
	{"Query", "user", 0},
	{"Query", "post", 0},
	{"Query", "posts", 0},
	{"Query", "me", 0},

	{"User", "posts", connectionBatch},
	{"User", "comments", connectionBatch},
	{"User", "following", connectionBatch},
	{"User", "followers", connectionBatch},

	{"Post", "author", lookupBatch},
	{"Post", "comments", connectionBatch},

	{"Comment", "author", lookupBatch},
	{"Comment", "post", lookupBatch},

	{"Follow", "follower", lookupBatch},
	{"Follow", "followed", lookupBatch},

	{"Mutation", "createUser", 0},
	{"Mutation", "updateUser", 0},
	{"Mutation", "createPost", 0},
	{"Mutation", "updatePost", 0},
	{"Mutation", "deletePost", 0},
	{"Mutation", "createComment", 0},
	{"Mutation", "deleteComment", 0},
	{"Mutation", "follow", 0},
	{"Mutation", "unfollow", 0},
}

// Find returns the route for "Type.field" and whether there is one.
func Find(key string) (Route, bool) {
	for _, r := range All {
		if r.Key() == key {
			return r, true
		}
	}
	return Route{}, false
}
