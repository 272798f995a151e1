package resolver

// The types the resolver's files share: the handler, a field's resolver
// and its result, a feature's part, what a resolver finds in its context,
// the parents as child resolvers read them, and the answers a reply
// carries for the levels below. Every other file builds on this one.

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"sync/atomic"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
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
