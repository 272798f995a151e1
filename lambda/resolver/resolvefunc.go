package resolver

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// maxConcurrent bounds the events of one batch resolved at the same time by
// per-event resolvers (each typically one Query).
const maxConcurrent = 32

// Each makes the Field of a resolver that handles each event on its own,
// with its arguments decoded into A (and validated, when A has a validate
// method), the events of a batch at once (at most maxConcurrent).
func Each[A any](fn func(ctx context.Context, ev *appsync.Event, args A) (any, error)) Field {
	return concurrently(withArgs(fn))
}

// withArgs decodes and validates an event's arguments before calling fn.
func withArgs[A any](fn func(ctx context.Context, ev *appsync.Event, args A) (any, error)) func(context.Context, *appsync.Event) (any, error) {
	return func(ctx context.Context, ev *appsync.Event) (any, error) {
		args, err := decodeArgs[A](ev)
		if err != nil {
			return nil, err
		}
		return fn(ctx, ev, args)
	}
}

// concurrently makes a resolver that calls fn for each event. The events of
// a batch run concurrently, at most maxConcurrent at a time.
func concurrently(fn func(ctx context.Context, ev *appsync.Event) (any, error)) Field {
	return func(ctx context.Context, evs []*appsync.Event) []Result {
		out := make([]Result, len(evs))
		run := func(ctx context.Context, i int) {
			data, err := fn(ctx, evs[i])
			out[i] = Result{Data: data, Err: err}
		}
		if len(evs) == 1 {
			run(ctx, 0)
			return out
		}
		var wg sync.WaitGroup
		sem := make(chan struct{}, maxConcurrent)
		branch := together(ctx, len(evs))
		for i := range evs {
			sem <- struct{}{}
			ctx := branch()
			wg.Go(func() {
				defer func() { <-sem }()
				run(ctx, i)
			})
		}
		wg.Wait()
		return out
	}
}

// batchedLookup makes the resolver of a field that is one item found by an
// ID on the parent: the batch's IDs fetched with one call of fetch (one
// BatchGetItem per 100 distinct keys), then each event answered in order; a
// missing item is NotFound for its event only.
func batchedLookup[S, T any](idOf func(S) string, fetch func(context.Context, []*appsync.Event, []string) (map[string]T, error),
	show func(*appsync.Event, T) any, missing string) Field {
	return func(ctx context.Context, evs []*appsync.Event) []Result {
		out := make([]Result, len(evs))
		ids := make([]string, len(evs))
		want := make([]string, 0, len(evs))
		for i, ev := range evs {
			src, err := decodeSource[S](ev)
			if err != nil {
				out[i] = Result{Err: err}
				continue
			}
			if ids[i] = idOf(src); !store.ValidID(ids[i]) {
				out[i] = Result{Err: errs.E("resolver.batchedLookup", errs.Validation, "invalid ID on the parent object")}
				continue
			}
			want = append(want, ids[i])
		}
		found, err := fetch(ctx, evs, want)
		for i, ev := range evs {
			switch {
			case out[i].Err != nil:
			case err != nil:
				out[i] = Result{Err: err}
			default:
				if v, ok := found[ids[i]]; ok {
					out[i] = Result{Data: show(ev, v)}
				} else {
					out[i] = Result{Err: errs.E("resolver.batchedLookup", errs.NotFound, missing)}
				}
			}
		}
		return out
	}
}

// together gives each of n goroutines (at most maxConcurrent at once) its
// branch of one cost.Together, so that their requests count as one round
// trip however they were scheduled.
func together(ctx context.Context, n int) func() context.Context {
	if n > maxConcurrent {
		return func() context.Context { return ctx }
	}
	return cost.Together(ctx)
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

// Decoding an event's arguments (into each field's own struct, validated)
// and its source (only the members a resolver reads, without reflection for
// the common shapes).

// noArgs is the argument struct of fields without arguments.
type noArgs struct{}

func decodeArgs[A any](ev *appsync.Event) (A, error) {
	var args A
	if len(ev.Arguments) > 0 && string(ev.Arguments) != "null" {
		var err error
		if stringsOnly[A]() && ev.Arguments[0] == '{' { // {"id": "..."}: no reflection
			args, err = stringMembers[A](ev.Arguments)
		} else {
			err = json.Unmarshal(ev.Arguments, &args)
		}
		if err != nil {
			return args, errs.Wrap("resolver.arguments", errs.Validation, "invalid arguments for "+ev.Info.Field(), err)
		}
	}
	if v, ok := any(&args).(validator); ok {
		if err := v.validate(); err != nil {
			return args, err
		}
	}
	return args, nil
}

// decodeSource reads the parent object of a nested field: only the members S
// declares (a post's body, or the comments it carries for a sibling field,
// are skipped, not decoded).
func decodeSource[S any](ev *appsync.Event) (S, error) {
	if len(ev.Source) == 0 || string(ev.Source) == "null" {
		var none S
		return none, errs.Internalf("resolver.source", "%s: event has no source", ev.Info.Field())
	}
	if stringsOnly[S]() {
		return decodeStrings[S](ev)
	}
	return decodeJSON[S](ev)
}

// decodeJSON decodes a source into S with encoding/json, from the members S
// names (payload.Pick) when it names them: S escapes to the heap there, so
// it is declared here, not on decodeSource's path of string fields.
func decodeJSON[S any](ev *appsync.Event) (S, error) {
	var src S
	picked := []byte(ev.Source)
	if names := jsonNames[S](); names != nil {
		picked = payload.Pick(ev.Source, names...)
	}
	if err := json.Unmarshal(picked, &src); err != nil {
		return src, errs.Internalf("resolver.source", "%s: decode source: %v", ev.Info.Field(), err)
	}
	return src, nil
}

// decodeStrings decodes a source into S, a struct of string fields only, as
// encoding/json would (see stringMembers).
func decodeStrings[S any](ev *appsync.Event) (S, error) {
	src, err := stringMembers[S](ev.Source)
	if err != nil {
		return src, errs.Internalf("resolver.source", "%s: decode source: %v", ev.Info.Field(), err)
	}
	return src, nil
}

// stringMembers decodes the JSON object raw into S, a struct of string
// fields, as encoding/json would (null leaves a field empty, a non-string is
// an error). raw must be valid JSON: a slice of a validated payload, or JSON
// this program encoded.
func stringMembers[S any](raw []byte) (S, error) {
	var dst S
	err := setStrings(reflect.ValueOf(&dst).Elem(), raw)
	return dst, err
}

// setStrings is stringMembers on v, a struct of string fields only: apart
// from it, and from every other function here that reflection serves, so
// that its code is in the binary once, not once for each struct type it is
// instantiated with (a few kilobytes each).
func setStrings(v reflect.Value, raw []byte) error {
	names := jsonNamesOf(v.Type())
	var err error
	payload.Walk(raw, 0, func(key []byte, i int) int {
		end, _ := payload.Skip(raw, i)
		name := payload.FieldOf(key, names...)
		member := raw[i:end]
		if name == "" || err != nil || string(member) == "null" { // null leaves the field as it was
			return end
		}
		str, uerr := payload.Unquote(member)
		if uerr != nil || member[0] != '"' {
			err = fmt.Errorf("member %q is %.20s, not a string", name, member)
			return end
		}
		v.Field(slices.Index(names, name)).SetString(str)
		return end
	})
	return err
}

// stringsOnly reports whether S is a flat struct of exported, tagged string
// fields (each named by jsonNames, in field order).
func stringsOnly[S any]() bool { return stringsOnlyOf(reflect.TypeFor[S]()) }

func stringsOnlyOf(t reflect.Type) bool {
	if only, ok := stringsByType.Load(t); ok {
		return only.(bool)
	}
	only := t.Kind() == reflect.Struct && len(jsonNamesOf(t)) == t.NumField()
	for i := 0; only && i < t.NumField(); i++ {
		only = t.Field(i).IsExported() && t.Field(i).Type.Kind() == reflect.String
	}
	stringsByType.Store(t, only)
	return only
}

var stringsByType sync.Map // reflect.Type -> bool

// namesByType caches jsonNames.
var namesByType sync.Map // reflect.Type -> []string

// jsonNames returns the JSON member names of the struct type S's fields, or
// nil (decode everything) when S is not a flat struct of tagged fields.
func jsonNames[S any]() []string { return jsonNamesOf(reflect.TypeFor[S]()) }

func jsonNamesOf(t reflect.Type) []string {
	if names, ok := namesByType.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" {
			names = nil
			break
		}
		if name != "-" {
			names = append(names, name)
		}
	}
	namesByType.Store(t, names)
	return names
}

// validator is implemented by argument structs that check themselves.
type validator interface{ validate() error }

// pageEnvelope is what a page adds to its items: {"items":[],"nextToken":"..."}.
const pageEnvelope = 512

// pageArgs are a connection field's arguments.
type pageArgs struct {
	Limit     *int    `json:"limit"`
	NextToken *string `json:"nextToken"`
	Order     *string `json:"order"`  // SortOrder; nil for the field's default
	After     *string `json:"after"`  // AWSDateTime, exclusive
	Before    *string `json:"before"` // AWSDateTime, exclusive

	attributes    []string // what to read of each item; nil for everything
	order         store.Order
	after, before time.Time
}

func (a *pageArgs) validate() error {
	const op = "resolver.page"
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > store.MaxLimit) {
		return errs.E(op, errs.Validation, fmt.Sprintf("limit must be between 1 and %d", store.MaxLimit))
	}
	if a.Order != nil {
		switch *a.Order {
		case "OLDEST_FIRST":
			a.order = store.OldestFirst
		case "NEWEST_FIRST":
			a.order = store.NewestFirst
		default:
			return errs.E(op, errs.Validation, "order must be NEWEST_FIRST or OLDEST_FIRST")
		}
	}
	var err error
	if a.after, err = dateTime("after", a.After); err != nil {
		return err
	}
	if a.before, err = dateTime("before", a.Before); err != nil {
		return err
	}
	if !a.after.IsZero() && !a.before.IsZero() && !a.after.Before(a.before) {
		return errs.E(op, errs.Validation, "after must be earlier than before")
	}
	return nil
}

// dateTime parses an AWSDateTime argument; nil is the zero time.
func dateTime(name string, v *string) (time.Time, error) {
	if v == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil || t.Before(store.MinTime) || t.After(store.MaxTime) {
		return time.Time{}, errs.E("resolver.page", errs.Validation,
			fmt.Sprintf("%s must be an AWSDateTime (such as 2024-05-01T12:00:00.000Z) after 1970", name))
	}
	return t, nil
}

// request returns the page the arguments ask for, for the field of ev: at
// most the field's share of a batch's reply (Route.ReplyBudget).
func (a pageArgs) request(ctx context.Context) store.PageRequest {
	r := store.PageRequest{Limit: store.DefaultLimit, MaxBytes: payload.MaxBytes}
	if route, ok := routeOf(ctx); ok {
		r.MaxBytes = route.replyBudget() - pageEnvelope
	}
	if a.Limit != nil {
		r.Limit = *a.Limit
	}
	if a.NextToken != nil {
		r.NextToken = *a.NextToken
	}
	r.Attributes = a.attributes
	r.Order, r.After, r.Before = a.order, a.after, a.before
	return r
}

type postArgs struct {
	ID string `json:"id"`
}
