package executor

import (
	"errors"

	"github.com/vektah/gqlparser/v2/ast"
)

// The API's limits on hostile queries: queryDepthLimit, checked before any
// resolver runs, and resolverCountLimit, past which resolvers fail without
// an invocation.

// errResolverLimit fails the resolvers past the API's resolverCountLimit, as
// AppSync does ("ResolverExecutionLimitReached"; the message is ours).
var errResolverLimit = outcome{err: errors.New("resolver execution limit reached"), errType: "ResolverExecutionLimitReached"}

// overLimit counts the resolvers of a level and, past the limit, fails the
// calls that would exceed it, which are then not invoked.
func (r *run) overLimit(groups map[string][]call, order []string) {
	for _, key := range order {
		calls := groups[key]
		room := max(r.e.resolverLimit-r.resolvers, 0)
		r.resolvers += len(calls)
		for i := room; i < len(calls); i++ {
			calls[i].limited = true
		}
	}
}

// depth returns how many levels of fields sel nests, fragments included (a
// root field is level 1). Merging fields deepens nothing, so it is the
// deepest of its parts; a named fragment's depth is computed once.
func (r *run) depth(sel ast.SelectionSet, fragments map[string]int) int {
	deepest := 0
	for _, s := range sel {
		switch x := s.(type) {
		case *ast.Field:
			if r.included(x.Directives) {
				deepest = max(deepest, 1+r.depth(x.SelectionSet, fragments))
			}
		case *ast.InlineFragment:
			if r.included(x.Directives) {
				deepest = max(deepest, r.depth(x.SelectionSet, fragments))
			}
		case *ast.FragmentSpread:
			if !r.included(x.Directives) {
				continue
			}
			d, ok := fragments[x.Name]
			if fd := r.doc.Fragments.ForName(x.Name); !ok && fd != nil {
				fragments[x.Name] = 0 // validation refuses cycles; this stops one all the same
				d = r.depth(fd.SelectionSet, fragments)
				fragments[x.Name] = d
			}
			deepest = max(deepest, d)
		}
	}
	return deepest
}
