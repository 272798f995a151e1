// Package resolver is the Lambda behind every AppSync direct resolver: it
// decodes the event (or batch), routes it on "parentTypeName.fieldName" and
// encodes the reply, converting errors once: an errs.Error's Kind becomes the
// errorType, any other error an InternalError whose cause is only logged.
package resolver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/internal/eventjson"
)

// Handler is the Lambda handler. It implements lambda.Handler.
type Handler struct {
	store     Store
	log       *slog.Logger
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

// WithMetricsNamespace puts the per-invocation metrics in namespace (the
// stack's name, so that two stacks' metrics do not mix).
func WithMetricsNamespace(namespace string) Option {
	return func(h *Handler) { h.metrics = emfMetrics(namespace) }
}

// WithCostLog writes the cost line of each invocation (see Invoke) to w,
// with one Write, instead of to standard output, where Lambda takes its logs
// from. The line does not go through the logger: slog would re-encode the
// EMF declaration as JSON on every invocation.
func WithCostLog(w io.Writer) Option { return func(h *Handler) { h.costs = w } }

// WithoutPrefetch makes parents never read the first page of a connection
// together with themselves: each page is its own Query (the layout of AppSync
// batching and BatchGetItem alone, which the benchmark compares with).
func WithoutPrefetch() Option { return func(h *Handler) { h.noPrefetch = true } }

// WithoutAnswers makes replies carry no answers for child fields (the
// layout of direct Lambda resolvers on every field, which cannot return
// early, and which the benchmark compares with).
func WithoutAnswers() Option { return func(h *Handler) { h.noAnswers = true } }

// WithSelectionReading makes the handler read selections as AppSync writing
// them under r. The default, appsync.FirstOccurrence, is right under either
// reading; appsync.EveryOccurrence reads and answers for the selection alone,
// cheaper, and right only where AppSync writes every occurrence.
func WithSelectionReading(r appsync.Reading) Option {
	return WithSelectionReadingFrom(func() appsync.Reading { return r })
}

// WithSelectionReadingFrom is WithSelectionReading with the reading asked of
// reading at each event (probe.Handoff's, once the deployment's probe has
// told it).
func WithSelectionReadingFrom(reading func() appsync.Reading) Option {
	return func(h *Handler) { h.reading = reading }
}

// readingNow is how the handler reads an event's selection now.
func (h *Handler) readingNow() appsync.Reading {
	if h.reading == nil {
		return appsync.FirstOccurrence
	}
	return h.reading()
}

// New returns a Handler reading from s and logging to log, serving
// CoreRoutes and the fields of the features wired in (WithFeature). It
// panics if a field is routed without a resolver, or twice, or a resolver has
// no route: a build error, caught by the tests.
func New(s Store, log *slog.Logger, opts ...Option) *Handler {
	h := &Handler{store: s, log: log, metrics: emfMetrics(DefaultMetricsNamespace), costs: os.Stdout}
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

// Invoke handles one Lambda payload: one event, answered with its value or a
// messages.InvokeResponse_Error (Type is the errorType), or a batch,
// answered with an array in order of {"data"} or {"data", "errorMessage",
// "errorType"}. Each invocation logs one EMF cost line.
func (h *Handler) Invoke(ctx context.Context, request []byte) ([]byte, error) {
	start := time.Now()
	ctx, cancel := withMargin(ctx, start)
	defer cancel()
	ctx, meter := cost.WithMeter(ctx)
	events, batch, err := eventjson.Decode(request) // a speed-up: appsync.Decode in its place decodes with encoding/json
	field := ""
	if len(events) > 0 {
		field = events[0].Info.Field()
	}
	defer func() { h.logCost(ctx, field, len(events), meter.Summary(), time.Since(start)) }()
	if err != nil {
		return nil, h.invokeError("", errs.Wrap("resolver.Invoke", errs.Validation, "malformed AppSync event", err))
	}
	if !batch {
		if answer, ok := probed(&events[0]); ok {
			return nil, answer
		}
	}
	ptrs := make([]*appsync.Event, len(events))
	for i := range events {
		ptrs[i] = &events[i]
	}
	results := h.resolve(ctx, ptrs)
	h.answerChildren(ctx, ptrs, results, halfway(ctx, start))
	return h.reply(events, results, batch)
}

// resolve routes each event to its field's resolver. Events of one field are
// resolved together (AppSync batches hold one field; a mixed array is split).
func (h *Handler) resolve(ctx context.Context, events []*appsync.Event) []Result {
	results := make([]Result, len(events))
	type field struct{ parent, name string }
	groups := map[field][]int{}
	var order []field
	for i, ev := range events {
		f := field{ev.Info.ParentTypeName, ev.Info.FieldName}
		if _, ok := groups[f]; !ok {
			order = append(order, f)
		}
		groups[f] = append(groups[f], i)
	}
	for _, f := range order {
		idx := groups[f]
		key := f.parent + "." + f.name
		fn, ok := h.fields[key]
		if !ok {
			err := errs.E("resolver.route", errs.Validation, fmt.Sprintf("no resolver for field %q", key))
			for _, i := range idx {
				results[i] = Result{Err: err}
			}
			continue
		}
		group := make([]*appsync.Event, len(idx))
		for j, i := range idx {
			group[j] = events[i]
		}
		for j, r := range h.safely(ctx, key, fn, group) {
			results[idx[j]] = r
		}
	}
	return results
}

// safely runs fn, turning a panic into an InternalError for every event.
func (h *Handler) safely(ctx context.Context, field string, fn Field, evs []*appsync.Event) (out []Result) {
	defer func() {
		if p := recover(); p != nil {
			err := errs.Internalf("resolver."+field, "panic: %v\n%s", p, debug.Stack())
			out = make([]Result, len(evs))
			for i := range out {
				out[i] = Result{Err: err}
			}
		}
	}()
	if r := h.resolving[field]; r != nil {
		ctx = context.WithValue(ctx, resolvingKey{}, r)
	}
	out = fn(ctx, evs)
	if len(out) != len(evs) {
		panic(fmt.Sprintf("resolver for %s returned %d results for %d events", field, len(out), len(evs)))
	}
	return out
}

// invokeError converts err for a single (unbatched) invocation.
func (h *Handler) invokeError(field string, err error) error {
	h.logError(field, err)
	return messages.InvokeResponse_Error{Type: errs.KindOf(err).String(), Message: errs.PublicMessage(err)}
}

// logError logs internal errors with their cause, and client errors briefly.
func (h *Handler) logError(field string, err error) {
	if errs.KindOf(err) == errs.Internal || errs.KindOf(err) == errs.Throttled {
		h.log.Error("resolver failed", "field", field, "errorType", errs.KindOf(err).String(), "cause", err.Error())
		return
	}
	h.log.Info("request refused", "field", field, "errorType", errs.KindOf(err).String(), "message", errs.PublicMessage(err))
}

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
	// Store, when set, is put between the resolvers and the store they
	// read: it returns a store that reads through the one it is given (a
	// layer that keeps what it reads, for one).
	Store func(Store) Store
}

// WithFeature serves the feature's fields beside the core's (a field
// routed twice panics in New).
func WithFeature(f Feature) Option { return func(h *Handler) { h.features = append(h.features, f) } }

// Routes is the table of the fields the handler resolves: the core's and
// its features'. The local AppSync and the stack read it.
func (h *Handler) Routes() *Routes { return h.table }
