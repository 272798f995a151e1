package executor_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/schema"
)

// mergeQuery writes a random query over the schema whose response keys
// often clash: aliases from a pool of three, fields selected again with
// other arguments or other sub-selections, in inline and named fragments,
// so that about half of them have fields that cannot merge.
func mergeQuery(sch *ast.Schema, r *rand.Rand) string {
	var fragments []string
	var sel func(typ *ast.Definition, depth int) string
	sel = func(typ *ast.Definition, depth int) string {
		var items []string
		for range 1 + r.IntN(4) {
			switch x := r.IntN(10); {
			case x == 0:
				items = append(items, "... on "+typ.Name+" "+sel(typ, depth))
			case x == 1 && len(fragments) < 4:
				name := fmt.Sprintf("F%d", len(fragments))
				fragments = append(fragments, "") // reserved, so that it never spreads itself
				fragments[len(fragments)-1] = "fragment " + name + " on " + typ.Name + " " + sel(typ, depth)
				items = append(items, "..."+name, "..."+name)
			default:
				var fields []*ast.FieldDefinition
				for _, f := range typ.Fields {
					if inner := sch.Types[f.Type.Name()]; !strings.HasPrefix(f.Name, "__") && (inner.Kind != ast.Object || depth < 3) &&
						!(f.Name == "posts" && typ.Name == "Query") && f.Name != "feed" && f.Name != "trending" {
						fields = append(fields, f)
					}
				}
				f := fields[r.IntN(len(fields))]
				item := f.Name
				if alias := []string{"", "", "", "", "", "", "", "a", "b"}[r.IntN(9)]; alias != "" {
					item = alias + ": " + f.Name
				}
				switch {
				case f.Name == "post" && typ.Name == "Query":
					item += fmt.Sprintf(`(id: "p%d")`, r.IntN(2))
				case f.Name == "user" && typ.Name == "Query":
					item += fmt.Sprintf(`(handle: "h%d")`, r.IntN(2))
				case f.Arguments.ForName("limit") != nil && r.IntN(4) == 0:
					item += fmt.Sprintf("(limit: %d)", 1+r.IntN(2))
				}
				if sch.Types[f.Type.Name()].Kind == ast.Object {
					item += " " + sel(sch.Types[f.Type.Name()], depth+1)
				}
				items = append(items, item)
			}
		}
		return "{ " + strings.Join(items, " ") + " }"
	}
	return "query Q " + sel(sch.Query, 0) + "\n" + strings.Join(fragments, "\n")
}

// The linear check of merged fields accepts and refuses exactly what
// gqlparser's OverlappingFieldsCanBeMerged does, on queries written to
// clash; FuzzMergedFields goes on with seeds of its own.
func TestMergedFieldsAreCheckedAsGqlparserChecksThem(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	refused := 0
	for seed := range 3000 {
		refused += checkMerge(t, sch, uint64(seed))
	}
	if refused < 300 || refused > 2700 {
		t.Errorf("%d of 3000 queries refused: the generator should clash about half of the time", refused)
	}
	t.Logf("%d of 3000 refused by both", refused)
}

func FuzzMergedFields(f *testing.F) {
	sch, err := schema.Load()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(uint64(0))
	f.Fuzz(func(t *testing.T, seed uint64) { checkMerge(t, sch, seed) })
}

// checkMerge compares the two on the query of seed, and returns 1 when both
// refuse it.
func checkMerge(t *testing.T, sch *ast.Schema, seed uint64) int {
	t.Helper()
	q := mergeQuery(sch, rand.New(rand.NewPCG(seed, 7)))
	_, want := gqlparser.LoadQuery(sch, q)
	_, got := executor.Parse(sch, q)
	if (len(got) == 0) != (len(want) == 0) {
		t.Fatalf("seed %d: executor.Parse says %v, gqlparser %v, of\n%s", seed, got, want, q)
	}
	if len(got) == 0 {
		return 0
	}
	if !strings.Contains(want.Error(), got[0].Message) && !strings.HasPrefix(got[0].Message, `Fields "`) {
		t.Errorf("seed %d: executor.Parse's %q is neither gqlparser's nor a conflict (%v)", seed, got[0].Message, want)
	}
	return 1
}

// The queries gqlparser took minutes of a core over are checked in one
// walk of their fields: a post with 8,000 copies of `author { name }`,
// inline fragments nested two by two 14 levels deep (16,384 at the bottom),
// and growths of them. The work is counted (each field walked once), not
// timed; their validation's time is in the log.
func TestLargeMergesAreCheckedInOneWalkOfTheirFields(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range largeMerges() {
		start := time.Now()
		doc, errs, walked := executor.ParseCounting(sch, q.text)
		took := time.Since(start)
		if len(errs) > 0 || doc == nil {
			t.Fatalf("%s: %v", q.name, errs)
		}
		if fields := strings.Count(q.text, "name") + strings.Count(q.text, "title") + strings.Count(q.text, "author") + 1; walked > fields {
			t.Errorf("%s: %d fields walked, more than the %d the query has", q.name, walked, fields)
		}
		t.Logf("%s (%d bytes): %d fields walked, in %v", q.name, len(q.text), walked, took)
	}
}

type namedQuery struct{ name, text string }

// largeMerges are the large merged queries of issue 36, and their growths.
func largeMerges() []namedQuery {
	var out []namedQuery
	for _, n := range []int{8000, 32000} {
		out = append(out, namedQuery{fmt.Sprintf("%d copies of author { name }", n),
			`{ post(id: "p") { ` + strings.Repeat("author { name } ", n) + `} }`})
	}
	for _, levels := range []int{14, 16} {
		var tree func(int) string
		tree = func(l int) string {
			if l == 0 {
				return "title author { name } "
			}
			inner := tree(l - 1)
			return "... on Post { " + inner + "} ... { " + inner + "} "
		}
		out = append(out, namedQuery{fmt.Sprintf("inline fragments nested two by two, %d levels", levels), `{ post(id: "p") { ` + tree(levels) + `} }`})
	}
	return out
}
