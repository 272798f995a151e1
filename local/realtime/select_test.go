package realtime_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/graphqljs"
	"github.com/example/appsync-dynamo/local/realtime"
)

// selectSchema has what a selection can meet: scalars, a list of scalars,
// an object, a list of non-null objects, non-null fields.
const selectSchema = `
directive @aws_subscribe(mutations: [String]) on FIELD_DEFINITION
type Query { root: Node }
type Mutation { make: Node }
type Subscription { root: Node @aws_subscribe(mutations: ["make"]) }
type Node { id: ID! name: String count: Int tags: [String] child: Node kids: [Node!] }
`

// What a subscriber receives of a mutation's value, on generated
// selections (aliases, named fragments spread again and nested, inline
// fragments with and without a type condition, @skip and @include with
// literals and variables, a response key repeated with other
// sub-selections) and generated values, against graphql-js executing the
// same selection as a query over that value.
func TestASubscriberReceivesWhatGraphQLSelects(t *testing.T) {
	schema := gqlparser.MustLoadSchema(&ast.Source{Name: "select.graphql", Input: selectSchema})
	h := realtime.New(schema, func(map[string]string) (*appsync.Identity, error) { return nil, nil },
		func(*ast.Definition, *ast.FieldDefinition, *appsync.Identity) bool { return true })
	r := rand.New(rand.NewPCG(5, 8))
	type selectCase struct {
		Query     string         `json:"query"`
		Variables map[string]any `json:"variables"`
		Value     map[string]any `json:"value"`
	}
	var cases []selectCase
	for range 1500 {
		sel, fragments := genSelection(r)
		vars := map[string]any{"t": true, "f": false}
		cases = append(cases, selectCase{Query: "query Q($t: Boolean!, $f: Boolean!) " + sel + fragments, Variables: vars, Value: genNode(r, 4)})
	}
	var want []struct {
		Data   map[string]any `json:"data"`
		Errors []string       `json:"errors"`
	}
	graphqljs.Run(t, "testdata/select.cjs", map[string]any{"sdl": selectSchema, "cases": cases}, &want)
	if len(want) != len(cases) {
		t.Fatalf("graphql-js answered %d cases of %d", len(want), len(cases))
	}
	merged, skipped := 0, 0
	for i, c := range cases {
		if len(want[i].Errors) > 0 {
			t.Fatalf("case %d: graphql-js refused %s: %v", i, c.Query, want[i].Errors)
		}
		sub := "subscription" + strings.TrimPrefix(c.Query, "query")
		got, errs, err := realtime.Project(h, sub, c.Variables, c.Value)
		if err != nil || errs > 0 {
			t.Fatalf("case %d: %s: %v, %d errors", i, sub, err, errs)
		}
		// Both through JSON: the hub's message is JSON, and so is the reference.
		b, _ := json.Marshal(got)
		var gotJSON map[string]any
		json.Unmarshal(b, &gotJSON)
		if !reflect.DeepEqual(gotJSON, want[i].Data) {
			w, _ := json.Marshal(want[i].Data)
			v, _ := json.Marshal(c.Value)
			t.Fatalf("case %d: %s\nvalue %s\nthe hub delivers %s\ngraphql-js selects %s", i, sub, v, b, w)
		}
		merged += strings.Count(c.Query, "child {") + strings.Count(c.Query, "kids {")
		skipped += strings.Count(c.Query, "@skip") + strings.Count(c.Query, "@include")
	}
	if merged < len(cases) || skipped < len(cases) {
		t.Errorf("the generator wrote %d object fields and %d directives in %d cases: too few to test merging and directives", merged, skipped, len(cases))
	}
}

// genSelection writes the root field's selection and the named fragments it
// spreads. Each alias always names the same field, so that any two fields
// of one response key can merge, as validation requires.
func genSelection(r *rand.Rand) (sel, fragments string) {
	g := &selGen{r: r}
	g.spreads = map[int][]int{}
	for k := range 3 { // fragment k spreads only fragments before it: no cycle
		g.writing = k
		g.frags = append(g.frags, g.set(2))
	}
	g.writing = -1
	body := g.set(3) // and both variables used, as validation requires
	sel = "{ root " + strings.TrimSuffix(body, "}") + "x: __typename @include(if: $t) y: __typename @skip(if: $f) } }"
	used := map[int]bool{} // the fragments the selection reaches: only those may be defined
	var reach func(from int)
	reach = func(from int) {
		for _, k := range g.spreads[from] {
			if !used[k] {
				used[k] = true
				reach(k)
			}
		}
	}
	reach(-1)
	var b strings.Builder
	for k := range g.frags {
		if used[k] {
			fmt.Fprintf(&b, " fragment F%d on Node %s", k, g.frags[k])
		}
	}
	return sel, b.String()
}

type selGen struct {
	r       *rand.Rand
	frags   []string
	writing int           // the fragment being written (-1: the root field's selection)
	spreads map[int][]int // the fragments each spreads, by writing
}

var (
	scalarFields = []string{"id", "name", "count", "tags", "__typename"}
	objectFields = []string{"child", "kids"}
	directives   = []string{"", "", "", " @skip(if: $t)", " @skip(if: $f)", " @include(if: $t)", " @include(if: $f)", " @skip(if: true)", " @include(if: true)", " @include(if: false)"}
)

// set writes a selection set on Node, with object fields depth levels deep
// at most.
func (g *selGen) set(depth int) string {
	var items []string
	for range 1 + g.r.IntN(4) {
		items = append(items, g.item(depth))
	}
	return "{ " + strings.Join(items, " ") + " }"
}

func (g *selGen) item(depth int) string {
	dir := directives[g.r.IntN(len(directives))]
	switch n := g.r.IntN(10); {
	case n < 4 || depth == 0:
		f := scalarFields[g.r.IntN(len(scalarFields))]
		return g.alias(f) + f + dir
	case n < 7:
		f := objectFields[g.r.IntN(len(objectFields))]
		return g.alias(f) + f + dir + " " + g.set(depth-1)
	case n < 9:
		cond := ""
		if g.r.IntN(2) == 0 {
			cond = " on Node"
		}
		return "..." + cond + dir + " " + g.set(depth-1)
	default:
		if len(g.frags) == 0 { // fragment 0 spreads none
			f := scalarFields[g.r.IntN(len(scalarFields))]
			return f + dir
		}
		k := g.r.IntN(len(g.frags)) // while fragment k is being written, one before it
		g.spreads[g.writing] = append(g.spreads[g.writing], k)
		return fmt.Sprintf("...F%d%s", k, dir)
	}
}

// alias is a field's alias, half the time: always the same one for a field.
func (g *selGen) alias(field string) string {
	if g.r.IntN(2) == 0 || field == "__typename" {
		return ""
	}
	return "a_" + field + ": "
}

// genNode is a Node's value, depth levels deep at most: its nullable fields
// sometimes null and sometimes absent (read as null), its non-null ones
// always there.
func genNode(r *rand.Rand, depth int) map[string]any {
	n := map[string]any{"id": fmt.Sprintf("n%d", r.IntN(1000))}
	maybe := func(name string, v func() any) {
		switch r.IntN(5) {
		case 0: // absent
		case 1:
			n[name] = nil
		default:
			n[name] = v()
		}
	}
	maybe("name", func() any { return strings.Repeat("𝄞", r.IntN(3)) + "n" })
	maybe("count", func() any { return float64(r.IntN(100)) })
	maybe("tags", func() any { return []any{"a", nil, "b"}[:r.IntN(4)] })
	if depth > 0 {
		maybe("child", func() any { return genNode(r, depth-1) })
		maybe("kids", func() any {
			kids := []any{}
			for range r.IntN(3) {
				kids = append(kids, genNode(r, depth-1))
			}
			return kids
		})
	}
	return n
}
