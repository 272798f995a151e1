package resolver

// Resolver combinators: a function of one event and its arguments made into
// the resolveFunc of a batch; arguments and sources decoded from an event;
// lookups batched across the whole AppSync batch.

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// maxConcurrent bounds the events of one batch resolved at the same time by
// per-event resolvers (each typically one Query).
const maxConcurrent = 32

// validator is implemented by argument structs that check themselves.
type validator interface{ validate() error }

// each makes a resolver that handles each event on its own, with its
// arguments decoded into A (and validated, when A has a validate method).
func each[A any](fn func(ctx context.Context, ev *appsync.Event, args A) (any, error)) resolveFunc {
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
func concurrently(fn func(ctx context.Context, ev *appsync.Event) (any, error)) resolveFunc {
	return func(ctx context.Context, evs []*appsync.Event) []result {
		out := make([]result, len(evs))
		run := func(ctx context.Context, i int) {
			data, err := fn(ctx, evs[i])
			out[i] = result{data: data, err: err}
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
	var src S
	if len(ev.Source) == 0 || string(ev.Source) == "null" {
		return src, errs.Internalf("resolver.source", "%s: event has no source", ev.Info.Field())
	}
	if stringsOnly[S]() {
		return decodeStrings[S](ev)
	}
	picked := []byte(ev.Source)
	var err error
	if names := jsonNames[S](); names != nil {
		picked, err = appsync.Pick(ev.Source, names...)
	}
	if err == nil {
		err = json.Unmarshal(picked, &src)
	}
	if err != nil {
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
// fields only, as encoding/json would: each member found (null leaves its
// field empty), a member that is not a string an error. raw is a slice of
// the payload Decode validated (an event's source or arguments), or JSON
// this program encoded, so its members are found without validating it
// again.
func stringMembers[S any](raw []byte) (S, error) {
	var dst S
	v := reflect.ValueOf(&dst).Elem()
	names := jsonNames[S]()
	var err error
	appsync.WalkOfValid(raw, 0, func(key []byte, i int) int {
		end, _ := appsync.SkipValid(raw, i)
		name := appsync.FieldOf(key, names...)
		member := raw[i:end]
		if name == "" || err != nil || string(member) == "null" { // null leaves the field as it was
			return end
		}
		str, uerr := appsync.Unquote(member)
		if uerr != nil || member[0] != '"' {
			err = fmt.Errorf("member %q is %.20s, not a string", name, member)
			return end
		}
		v.Field(slices.Index(names, name)).SetString(str)
		return end
	})
	return dst, err
}

// stringsOnly reports whether S is a flat struct of exported, tagged string
// fields (each named by jsonNames, in field order).
func stringsOnly[S any]() bool {
	t := reflect.TypeFor[S]()
	if only, ok := stringsByType.Load(t); ok {
		return only.(bool)
	}
	only := t.Kind() == reflect.Struct && len(jsonNames[S]()) == t.NumField()
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
func jsonNames[S any]() []string {
	t := reflect.TypeFor[S]()
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

// batchedLookup makes a batched resolver for a field that is one item found by an
// ID on the parent (Post.author, Comment.post, ...): it collects the IDs of
// every event in the batch and fetches them with one call of fetch (one
// BatchGetItem per 100 distinct keys; fetch sees the events, for what they
// select), then answers each event in order. A
// missing item is a NotFound error for its event only.
func batchedLookup[S, T any](idOf func(S) string, fetch func(context.Context, []*appsync.Event, []string) (map[string]T, error),
	show func(*appsync.Event, T) any, missing string) resolveFunc {
	return func(ctx context.Context, evs []*appsync.Event) []result {
		out := make([]result, len(evs))
		ids := make([]string, len(evs))
		want := make([]string, 0, len(evs))
		for i, ev := range evs {
			src, err := decodeSource[S](ev)
			if err != nil {
				out[i] = result{err: err}
				continue
			}
			if ids[i] = idOf(src); !store.ValidID(ids[i]) {
				out[i] = result{err: errs.E("resolver.batchedLookup", errs.Validation, "invalid ID on the parent object")}
				continue
			}
			want = append(want, ids[i])
		}
		found, err := fetch(ctx, evs, want)
		for i, ev := range evs {
			switch {
			case out[i].err != nil:
			case err != nil:
				out[i] = result{err: err}
			default:
				if v, ok := found[ids[i]]; ok {
					out[i] = result{data: show(ev, v)}
				} else {
					out[i] = result{err: errs.E("resolver.batchedLookup", errs.NotFound, missing)}
				}
			}
		}
		return out
	}
}

// together gives each of n goroutines that start at once, at most
// maxConcurrent of them, its branch of one cost.Together, so that their
// DynamoDB requests count as one round trip however they were scheduled.
// Past maxConcurrent some wait for a slot, and so for another's requests:
// their contexts stay as they are, and the times decide.
func together(ctx context.Context, n int) func() context.Context {
	if n > maxConcurrent {
		return func() context.Context { return ctx }
	}
	return cost.Together(ctx)
}
