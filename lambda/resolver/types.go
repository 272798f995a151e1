package resolver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Handler is the Lambda handler. It implements lambda.Handler.
type Handler struct {
	store     Store
	log       *slog.Logger
	decode    func(payload []byte) ([]appsync.Event, bool, error) // appsync.Decode, or a speed-up that matches it
	fields    map[string]Field
	features  []Feature // WithFeature
	table     *Routes   // every routed field: the core's and the features'
	resolving map[string]*resolving
	metrics   json.RawMessage // the EMF declaration of the cost line, encoded once
	costs     io.Writer       // where the cost lines go (WithCostLog)
	invoked   atomic.Bool     // false until the first invocation
	// noPrefetch and noAnswers turn the pattern's two parts off, for the
	// benchmark's layouts (see WithoutPrefetch and WithoutAnswers).
	noPrefetch, noAnswers bool
	// reading says how the handler takes AppSync to write a merged field's
	// selection (WithSelectionReading), asked once an event; nil: the
	// default, appsync.FirstOccurrence.
	reading func() appsync.Reading
}

// Option configures a Handler.
type Option func(*Handler)

// readingNow is how the handler reads an event's selection now.
func (h *Handler) readingNow() appsync.Reading {
	if h.reading == nil {
		return appsync.FirstOccurrence
	}
	return h.reading()
}

// Result is the outcome of resolving one event: its answer, encoded as
// JSON, or an error, whose errs.Kind is the GraphQL errorType (any other
// error is an InternalError, its cause logged).
type Result struct {
	Data any
	Err  error
}

// Field resolves the events of one routed field, a batch's at once,
// returning one Result per event, in order. Each makes one from a resolver
// of one event and its arguments.
type Field func(ctx context.Context, evs []*appsync.Event) []Result

// resolving is what a Field finds in its context (one per route, made in
// New): the route of the field it resolves, and the handler resolving it.
type resolving struct {
	route *Route
	h     *Handler
}

// resolvingKey is the context key of resolving.
type resolvingKey struct{}

// routeOf returns the route of the field ctx resolves, and whether it is
// known (it is, within a Field the handler calls).
func routeOf(ctx context.Context) (Route, bool) {
	if r, ok := ctx.Value(resolvingKey{}).(*resolving); ok {
		return *r.route, true
	}
	return Route{}, false
}

// handlerOf returns the handler resolving the field ctx resolves (nil
// outside a Field the handler calls).
func handlerOf(ctx context.Context) *Handler {
	if r, ok := ctx.Value(resolvingKey{}).(*resolving); ok {
		return r.h
	}
	return nil
}

// Feature is an optional feature's part of the API: its routes' resolvers,
// keyed "Type.field", and what it wraps every mutation's resolver in (in the
// order the features are wired; nil: nothing).
type Feature struct {
	Routes    []Route
	Fields    map[string]Field
	Mutations func(Field) Field
	// Answer, when set, may answer a single (unbatched) event whose request
	// names AnswerHeader (lower case), before it is routed: a non-nil error
	// is the event's answer (the selection probe's).
	Answer       func(*appsync.Event) error
	AnswerHeader string
	// Store, when set, is put between the resolvers and the store they
	// read: it returns a store that reads through the one it is given (a
	// layer that keeps what it reads, for one).
	Store func(Store) Store
}

// Parent objects, as far as child resolvers read them from source.
type (
	userSource struct {
		ID                  string                        `json:"id"`
		PrefetchedFollowing *store.Prefetch[store.Follow] `json:"prefetchedFollowing"`
	}
	postSource struct {
		AuthorID string `json:"authorId"`
	}
	// postCommentsSource is a post as Post.comments reads it: with what its
	// resolver prefetched (decoded only by the field that uses it, never by
	// its siblings).
	postCommentsSource struct {
		ID                 string                         `json:"id"`
		PrefetchedComments *store.Prefetch[store.Comment] `json:"prefetchedComments"`
	}
	commentSource struct {
		PostID   string `json:"postId"`
		AuthorID string `json:"authorId"`
	}
	followSource struct {
		FollowerID string `json:"followerId"`
		FollowedID string `json:"followedId"`
	}
	postIDSource struct {
		ID string `json:"id"`
	}
	likeSource struct {
		UserID string `json:"userId"`
	}
)

// caller returns the signed-in user's ID, or an Unauthorized error for API-key
// and IAM callers without a user.
func caller(ev *appsync.Event) (string, error) {
	if id := ev.Identity.UserID(); id != "" {
		return id, nil
	}
	return "", errs.E(ev.Info.Field(), errs.Unauthorized, ev.Info.FieldName+" needs a signed-in user")
}

// AnswersMember is the member of a resolved object that holds its children's
// answers, and defaultsMember the default arguments of the fields answered
// (Route.Defaults), by field. Neither is a schema field: AppSync
// ignores them in responses.
const (
	AnswersMember  = "_answers"
	defaultsMember = "_defaults"
)

// answered is an object of a reply whose children may be answered.
type answered struct {
	raw     json.RawMessage  // the object as its resolver returned it
	typ     string           // its GraphQL type
	fields  []*appsync.Field // what the query selects on it, every occurrence merged
	reply   *replyRoom       // the reply that holds it
	answers []*answer
	// asked counts the first-page occurrences of the child field whose first
	// page the object may carry (prefetchMembers), got those answered.
	asked, got int
}

// replyRoom is what one event's reply still has room for, and its event.
type replyRoom struct {
	ev    *appsync.Event
	bytes int
}

// answer is the answer to one child field of one object, for the
// occurrences with the same arguments.
type answer struct {
	key    string
	route  Route
	fields []*appsync.Field
	parent *answered
	ev     *appsync.Event // the event its resolver gets, as AppSync would send it
	data   json.RawMessage
	objs   []*answered // the objects in data, nil for a null
}

// prefetchMembers names, for each field a parent can prefetch, the member
// of the parent's result that carries the prefetch.
var prefetchMembers = map[string]string{
	"Post.comments":  "prefetchedComments",
	"User.following": "prefetchedFollowing",
}

// hidesChildren reports whether a named fragment spread hides what the
// objects' children select under the every-occurrence reading: they are then
// neither answered nor prefetched for. Under first-occurrence every object
// is read whole, so its answers serve whatever the query merges in.
func hidesChildren(set appsync.Selection) bool { return set.Opaque && !set.Partial }

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

// Store is what the resolvers need from the table; *store.Store has it:
// point reads, pages, reads of a parent with its children, and writes.
type Store interface {
	reads
	pages
	prefetches
	writes
}

var _ Store = (*store.Store)(nil)

// reads is what the read fields need of the table to look items up: by key
// (a Query of an entity's own item and its counter), by handle (a Query on
// GSI1) and many at once (BatchGetItem).
type reads interface {
	User(ctx context.Context, id string) (store.User, error)
	UserByHandle(ctx context.Context, handle string) (store.User, error)
	Users(ctx context.Context, ids []string, counts bool) (map[string]store.User, error)
	Post(ctx context.Context, id string) (store.Post, error)
	Posts(ctx context.Context, ids []string, attrs ...string) (map[string]store.Post, error)
	PostsExist(ctx context.Context, ids []string) (map[string]bool, error)
	LikedBy(ctx context.Context, userID string, postIDs []string) (map[string]bool, error)
}

// pages is what the connection fields need of the table: one Query each.
type pages interface {
	PostsByAuthor(ctx context.Context, authorID string, drafts bool, page store.PageRequest) (store.Page[store.Post], error)
	CommentsOnPost(ctx context.Context, postID string, page store.PageRequest) (store.Page[store.Comment], error)
	CommentsByAuthor(ctx context.Context, authorID string, page store.PageRequest) (store.Page[store.Comment], error)
	Following(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
	Followers(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
	Likes(ctx context.Context, postID string, page store.PageRequest) (store.Page[store.Like], error)
}

// prefetches is what the pattern needs of the table: a parent read together
// with the first page of one of its connections (one Query of its partition),
// and the pages served from such a prefetch with no request.
type prefetches interface {
	PostWithComments(ctx context.Context, id string, first store.PageRequest, maxBytes int) (store.Post, store.Prefetch[store.Comment], error)
	UserWithFollowing(ctx context.Context, id string, limit, maxBytes int) (store.User, store.Prefetch[store.Follow], error)
	CommentsFromPrefetch(p store.Prefetch[store.Comment], req store.PageRequest) (store.Page[store.Comment], bool)
	FollowingFromPrefetch(p store.Prefetch[store.Follow], req store.PageRequest) (store.Page[store.Follow], bool)
}

// writes is what the mutations need of the table: one call each, which is the
// whole write (a transaction, or one conditional UpdateItem).
type writes interface {
	CreateUser(ctx context.Context, u store.User) (store.User, error)
	UpdateUser(ctx context.Context, id string, name, bio *string) (store.User, error)
	CreatePost(ctx context.Context, authorID string, in store.NewPost) (store.Post, error)
	PublishPost(ctx context.Context, callerID, id string) (store.Post, error)
	UpdatePost(ctx context.Context, callerID, id string, edit store.PostEdit) (store.Post, error)
	DeletePost(ctx context.Context, callerID, id string) (store.Post, error)
	CreateComment(ctx context.Context, authorID, postID, body string) (store.Comment, error)
	DeleteComment(ctx context.Context, callerID, postID, id string) (store.Comment, error)
	Follow(ctx context.Context, followerID, followedID string) (store.Follow, error)
	Unfollow(ctx context.Context, followerID, followedID string) (*store.Follow, error)
	LikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error)
	UnlikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error)
}

// What a parent returns with its prefetch: a post with its first comments,
// a user with its first follows, encoded as the entity is with the
// prefetch as one more member, which AppSync passes on to the children.

// postResult is a Post as resolvers return it: with its first comments when
// they were read together with it. AppSync ignores the extra key in the
// response and hands the whole object to the post's child resolvers.
type postResult struct {
	store.Post
	PrefetchedComments *store.Prefetch[store.Comment] `json:"prefetchedComments,omitempty"`
}

// MarshalJSON encodes the post as store.Post does (only what was read), with
// its prefetched comments, if any, as one more member. Without it, Post's own
// MarshalJSON, promoted through the embedding, would drop them.
func (r postResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends the post as MarshalJSON encodes it, without reflection
// (store.Post's AppendJSON would drop the prefetch as well).
func (r postResult) AppendJSON(dst []byte) []byte {
	start := len(dst)
	dst = r.Post.AppendJSON(dst)
	if r.PrefetchedComments == nil {
		return dst
	}
	return appendMember(dst, start, "prefetchedComments", func(dst []byte) []byte {
		return r.PrefetchedComments.AppendJSON(dst, store.Comment.AppendJSON)
	})
}

// appendMember adds to the object encoded in dst[start:] the member name,
// whose value appendValue appends.
func appendMember(dst []byte, start int, name string, appendValue func([]byte) []byte) []byte {
	if len(dst)-start > 2 { // not {}
		dst = append(dst[:len(dst)-1], ',')
	} else {
		dst = dst[:len(dst)-1]
	}
	dst = appendValue(append(append(append(dst, '"'), name...), '"', ':'))
	return append(dst, '}')
}

// userResult is a User with the follows it made, when read together.
type userResult struct {
	store.User
	PrefetchedFollowing *store.Prefetch[store.Follow] `json:"prefetchedFollowing,omitempty"`
}

// MarshalJSON encodes the user as store.User does, with its prefetched
// follows, if any, as one more member (User's own MarshalJSON, promoted
// through the embedding, would drop them).
func (r userResult) MarshalJSON() ([]byte, error) {
	dst := r.User.AppendJSON(nil)
	if r.PrefetchedFollowing == nil {
		return dst, nil
	}
	return appendMember(dst, 0, "prefetchedFollowing", func(dst []byte) []byte {
		return r.PrefetchedFollowing.AppendJSON(dst, store.Follow.AppendJSON)
	}), nil
}
