package resolver

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime/debug"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/internal/argjson" // speed-up: argjson
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
// and its source (the parent's result): with encoding/json (unmarshal), or
// a speed-up that matches it.

// noArgs is the argument struct of fields without arguments.
type noArgs struct{}

func decodeArgs[A any](ev *appsync.Event) (A, error) {
	var args A
	if len(ev.Arguments) > 0 && string(ev.Arguments) != "null" {
		decode := unmarshal[A]
		decode = argjson.Args[A] // speed-up: argjson
		var err error
		if args, err = decode(ev.Arguments); err != nil {
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

// decodeSource reads the parent object of a nested field.
func decodeSource[S any](ev *appsync.Event) (S, error) {
	if len(ev.Source) == 0 || string(ev.Source) == "null" {
		var none S
		return none, errs.Internalf("resolver.source", "%s: event has no source", ev.Info.Field())
	}
	decode := unmarshal[S]
	decode = argjson.Source[S] // speed-up: argjson
	src, err := decode(ev.Source)
	if err != nil {
		return src, errs.Internalf("resolver.source", "%s: decode source: %v", ev.Info.Field(), err)
	}
	return src, nil
}

// unmarshal is json.Unmarshal into a new T.
func unmarshal[T any](raw []byte) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
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
