package resolver

// The route table: the GraphQL fields the core resolves, each with its
// AppSync batch size (CoreRoutes, which the stack and the local AppSync
// read, joined with the features' in NewRoutes), the resolver of each
// (routes), and New, the handler serving them with the features' fields.

import (
	"log/slog"
	"os"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/internal/eventjson" // speed-up: eventjson
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Batch sizes: one level of the seed's query is one invocation where the
// 6 MB payload allows (local/executor's TestLeanBatchesOfTheSeedQuery); how
// each was chosen, and the byte budgets they give, in docs/limits.md.
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

// routes maps every field of the core (CoreRoutes) to its resolver.
func (h *Handler) routes() map[string]Field {
	return map[string]Field{
		"Query.user":  Each(h.user),
		"Query.post":  Each(h.post),
		"Query.posts": Each(h.posts),
		"Query.me":    Each(h.me),

		"User.posts":     Each(h.userPosts),
		"User.comments":  Each(h.userComments),
		"User.following": h.userConnection(h.store.Following, h.followingFromPrefetch, func(f store.Follow) string { return f.FollowedID }),
		"User.followers": h.userConnection(h.store.Followers, nil, func(f store.Follow) string { return f.FollowerID }),

		"Post.author":    batchedLookup(func(p postSource) string { return p.AuthorID }, h.users, showUser, "author not found"),
		"Post.comments":  Each(h.postComments),
		"Post.likes":     Each(h.postLikes),
		"Post.likedByMe": h.likedByMe,

		"Like.user": batchedLookup(func(l likeSource) string { return l.UserID }, h.users, showUser, "user not found"),

		"Comment.author": batchedLookup(func(c commentSource) string { return c.AuthorID }, h.commentAuthors, showUser, "author not found"),
		"Comment.post":   h.commentPosts,

		"Follow.follower": batchedLookup(func(f followSource) string { return f.FollowerID }, h.users, showUser, "user not found"),
		"Follow.followed": batchedLookup(func(f followSource) string { return f.FollowedID }, h.users, showUser, "user not found"),

		"Mutation.createUser":    mutation(h.createUser),
		"Mutation.updateUser":    mutation(h.updateUser),
		"Mutation.createPost":    mutation(h.createPost),
		"Mutation.updatePost":    mutation(h.updatePost),
		"Mutation.deletePost":    mutation(h.deletePost),
		"Mutation.publishPost":   mutation(h.publishPost),
		"Mutation.createComment": mutation(h.createComment),
		"Mutation.deleteComment": mutation(h.deleteComment),
		"Mutation.follow":        mutation(h.follow),
		"Mutation.unfollow":      mutation(h.unfollow),
		"Mutation.likePost":      mutation(h.likePost),
		"Mutation.unlikePost":    mutation(h.unlikePost),
	}
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

// New returns a Handler reading from s and logging to log, serving
// CoreRoutes and the fields of the features wired in (WithFeature). It
// panics if a field is routed without a resolver, or twice, or a resolver has
// no route: a build error, caught by the tests.
func New(s Store, log *slog.Logger, opts ...Option) *Handler {
	h := &Handler{store: s, log: log, decode: appsync.Decode, metrics: emfMetrics(DefaultMetricsNamespace), costs: os.Stdout}
	h.decode = eventjson.Decode // speed-up: eventjson
	for _, o := range opts {
		o(h)
	}
	for _, f := range h.features {
		if f.Store != nil {
			h.store = f.Store(h.store)
		}
	}
	h.fields = h.routes()
	var featureRoutes [][]Route
	for _, f := range h.features {
		featureRoutes = append(featureRoutes, f.Routes)
		for key, field := range f.Fields {
			h.fields[key] = field
		}
	}
	for _, f := range h.features {
		for key, field := range h.fields {
			if f.Mutations != nil && strings.HasPrefix(key, "Mutation.") {
				h.fields[key] = f.Mutations(field)
			}
		}
	}
	h.table = NewRoutes(featureRoutes...)
	for _, r := range h.table.All() {
		if h.fields[r.Key()] == nil {
			panic("resolver: " + r.Key() + " is routed but has no resolver")
		}
	}
	if len(h.fields) != len(h.table.All()) {
		for key := range h.fields {
			if _, ok := h.table.Find(key); !ok {
				panic("resolver: " + key + " has a resolver but is not routed")
			}
		}
	}
	h.resolving = map[string]*resolving{}
	for _, r := range h.table.All() {
		h.resolving[r.Key()] = &resolving{route: h.table.entry(r.Key()), h: h}
	}
	return h
}
