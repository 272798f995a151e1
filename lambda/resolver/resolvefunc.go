package resolver

// Resolver combinators: a function of one event and its arguments made into
// the resolveFunc of a batch (its events at once, within maxConcurrent), and
// lookups batched across the whole AppSync batch.

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
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
