package querygen_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/local/querygen"
	"github.com/example/appsync-dynamo/schema"
)

// The generator writes, often enough to be tried in every run of the
// differential test, each shape a client library writes and a resolver can
// mistake: a fragment on Query selecting a root field the operation selects
// too, a named spread inside an inline fragment, a directive on a spread,
// and a field merged from two occurrences whose sub-selections merge again
// below it.
func TestTheGeneratorWritesTheShapesThatMerge(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	gen := querygen.New(sch, querygen.Values{
		Root: func(r *rand.Rand, field string) (string, bool) {
			switch field {
			case "user":
				return `(handle: "alice")`, r.IntN(5) < 2
			case "post":
				return `(id: "p1")`, r.IntN(5) < 2
			case "posts":
				return `(ids: ["p1"])`, r.IntN(5) < 2
			}
			return "", r.IntN(5) < 2
		},
		DateTimes: []string{"2024-05-01T08:03:30.000Z"},
	}, 5)
	const n = 2000
	seen := map[string]int{}
	for i := range n {
		q, err := gen.Generate(rand.New(rand.NewPCG(uint64(i), 1)))
		if err != nil {
			t.Fatal(err)
		}
		doc, errs := gqlparser.LoadQuery(sch, q.Text)
		if len(errs) > 0 {
			t.Fatalf("seed %d does not validate: %v\n%s", i, errs, q.Text)
		}
		for shape, ok := range shapes(doc) {
			if ok {
				seen[shape]++
			}
		}
	}
	for _, shape := range []string{"a root field again in a fragment on Query", "a named spread inside an inline fragment",
		"a directive on a spread", "a merge two levels deep", "a merge three levels deep"} {
		if seen[shape] < n/20 {
			t.Errorf("%q in %d of %d queries, want at least %d", shape, seen[shape], n, n/20)
		}
		t.Logf("%q in %d of %d queries", shape, seen[shape], n)
	}
}

// shapes names the shapes a query document has.
func shapes(doc *ast.QueryDocument) map[string]bool {
	out := map[string]bool{}
	var walk func(sel ast.SelectionSet, inInline bool)
	walk = func(sel ast.SelectionSet, inInline bool) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				walk(x.SelectionSet, false)
			case *ast.InlineFragment:
				walk(x.SelectionSet, true)
			case *ast.FragmentSpread:
				out["a named spread inside an inline fragment"] = out["a named spread inside an inline fragment"] || inInline
				out["a directive on a spread"] = out["a directive on a spread"] || len(x.Directives) > 0
			}
		}
	}
	op := doc.Operations[0]
	walk(op.SelectionSet, false)
	for _, f := range doc.Fragments {
		walk(f.SelectionSet, false)
	}
	for _, group := range collect(doc, op.SelectionSet) {
		if len(group) > 1 && slices.ContainsFunc(group, func(o occurrence) bool { return o.viaQueryFragment }) {
			out["a root field again in a fragment on Query"] = true
		}
	}
	switch depth := mergeDepth(doc, op.SelectionSet); {
	case depth >= 3:
		out["a merge three levels deep"] = true
		fallthrough
	case depth >= 2:
		out["a merge two levels deep"] = true
	}
	return out
}

// occurrence is a field as written, and whether it came through a
// fragment on Query.
type occurrence struct {
	*ast.Field
	viaQueryFragment bool
}

// collect groups the fields sel selects by response key, through fragments
// (GraphQL's CollectFields, directives aside).
func collect(doc *ast.QueryDocument, sel ast.SelectionSet) map[string][]occurrence {
	groups := map[string][]occurrence{}
	var walk func(ast.SelectionSet, bool)
	walk = func(sel ast.SelectionSet, via bool) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				groups[key(x)] = append(groups[key(x)], occurrence{x, via})
			case *ast.InlineFragment:
				walk(x.SelectionSet, via || x.TypeCondition == "Query")
			case *ast.FragmentSpread:
				if fd := doc.Fragments.ForName(x.Name); fd != nil {
					walk(fd.SelectionSet, via || fd.TypeCondition == "Query")
				}
			}
		}
	}
	walk(sel, false)
	return groups
}

// mergeDepth is how many levels down fields merge from two occurrences
// each: 1 for a field written twice, 2 when two of its occurrences' fields
// merge again below it, and so on.
func mergeDepth(doc *ast.QueryDocument, sel ast.SelectionSet) int {
	deepest := 0
	for _, group := range collect(doc, sel) {
		if len(group) < 2 {
			continue
		}
		var below ast.SelectionSet
		for _, f := range group {
			below = append(below, f.SelectionSet...)
		}
		deepest = max(deepest, 1+mergeDepth(doc, below))
	}
	return deepest
}

func key(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}
