package realtime_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/example/appsync-dynamo/local/realtime"
)

// filterOf is a filterJsonObject of one filter per group given, each a list
// of (fieldName, operator, value).
func filterOf(groups ...[][3]any) map[string]any {
	var fg []any
	for _, g := range groups {
		var fs []any
		for _, c := range g {
			fs = append(fs, map[string]any{"fieldName": c[0], "operator": c[1], "value": c[2]})
		}
		fg = append(fg, map[string]any{"filters": fs})
	}
	return map[string]any{"filterGroup": fg}
}

func repeat(n int, v any) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprint(v, i)
	}
	return out
}

// What AppSync refuses, at its limits and one past them.
func TestFiltersAtAppSyncsLimits(t *testing.T) {
	cond := [3]any{"postId", "eq", "p1"}
	conds := func(n int) [][3]any {
		out := make([][3]any, n)
		for i := range out {
			out[i] = cond
		}
		return out
	}
	groups := func(n int) [][][3]any {
		out := make([][][3]any, n)
		for i := range out {
			out[i] = [][3]any{cond}
		}
		return out
	}
	deep := func(levels int) string { return strings.TrimSuffix(strings.Repeat("a.", levels), ".") }
	cases := []struct {
		name   string
		filter map[string]any
		ok     bool
	}{
		{"10 filters", filterOf(groups(realtime.MaxFilters)...), true},
		{"11 filters", filterOf(groups(realtime.MaxFilters + 1)...), false},
		{"5 conditions", filterOf(conds(realtime.MaxConditions)), true},
		{"6 conditions", filterOf(conds(realtime.MaxConditions + 1)), false},
		{"no filter", filterOf(), false},
		{"a filter without conditions", filterOf([][3]any{}), false},
		{"a path 5 deep", filterOf([][3]any{{deep(5), "eq", 1}}), true},
		{"a path 6 deep", filterOf([][3]any{{deep(6), "eq", 1}}), false},
		{"a path of 256", filterOf([][3]any{{strings.Repeat("a", 256), "eq", 1}}), true},
		{"a path of 257", filterOf([][3]any{{strings.Repeat("a", 257), "eq", 1}}), false},
		{"an empty path step", filterOf([][3]any{{"a..b", "eq", 1}}), false},
		{"in of 5", filterOf([][3]any{{"a", "in", repeat(5, "v")}}), true},
		{"in of 6", filterOf([][3]any{{"a", "in", repeat(6, "v")}}), false},
		{"notIn of 6", filterOf([][3]any{{"a", "notIn", repeat(6, "v")}}), false},
		{"containsAny of 20", filterOf([][3]any{{"a", "containsAny", repeat(20, "v")}}), true},
		{"containsAny of 21", filterOf([][3]any{{"a", "containsAny", repeat(21, "v")}}), false},
		{"between two numbers", filterOf([][3]any{{"a", "between", []any{1.0, 2.0}}}), true},
		{"between three", filterOf([][3]any{{"a", "between", []any{1.0, 2.0, 3.0}}}), false},
		{"between a number and a string", filterOf([][3]any{{"a", "between", []any{1.0, "b"}}}), false},
		{"an unknown operator", filterOf([][3]any{{"a", "like", "x"}}), false},
		{"beginsWith a number", filterOf([][3]any{{"a", "beginsWith", 1.0}}), false},
		{"eq an object", filterOf([][3]any{{"a", "eq", map[string]any{"b": 1.0}}}), false},
		{"eq null", filterOf([][3]any{{"a", "eq", nil}}), false},
		{"not a filter", map[string]any{"postId": map[string]any{"eq": "p1"}}, false},
	}
	for _, c := range cases {
		_, err := realtime.ParseFilter(c.filter)
		if (err == nil) != c.ok {
			t.Errorf("%s: ParseFilter error %v, want ok=%v", c.name, err, c.ok)
		}
	}
}

// The filters' meaning, on generated payloads and filters, against a
// reference written in JavaScript (the language the filters come from):
// OR across a group, AND within a filter, each operator as AppSync's
// documentation describes it, a missing or null field false.
func TestFiltersMatchAsTheReferenceDoes(t *testing.T) {
	vm := goja.New()
	if _, err := vm.RunString(reference); err != nil {
		t.Fatal(err)
	}
	match, _ := goja.AssertFunction(vm.Get("match"))
	r := rand.New(rand.NewPCG(1, 2))
	matched := 0
	for i := range 20000 {
		payload, filter := genPayload(r), genFilter(r)
		f, err := realtime.ParseFilter(filter)
		if err != nil {
			t.Fatalf("generated filter %v refused: %v", filter, err)
		}
		pj, _ := json.Marshal(payload)
		fj, _ := json.Marshal(filter)
		want, err := match(goja.Undefined(), vm.ToValue(string(pj)), vm.ToValue(string(fj)))
		if err != nil {
			t.Fatal(err)
		}
		if got := f.Match(payload); got != want.ToBoolean() {
			t.Fatalf("case %d: payload %s, filter %s: Match %v, the reference %v", i, pj, fj, got, want.ToBoolean())
		}
		if want.ToBoolean() {
			matched++
		}
	}
	if matched < 2000 || matched > 18000 {
		t.Errorf("%d of 20000 generated cases matched: the generator tests one answer more than the other", matched)
	}
}

const reference = `
function at(obj, path) {
  let v = obj;
  for (const name of path.split('.')) {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    v = v[name];
  }
  return v;
}
function comparable(a, b) {
  return (typeof a === 'number' && typeof b === 'number') || (typeof a === 'string' && typeof b === 'string');
}
function has(v, x) {
  if (typeof v === 'string') return typeof x === 'string' && v.indexOf(x) >= 0;
  if (Array.isArray(v)) return v.some((e) => e === x);
  return false;
}
function holds(payload, c) {
  const v = at(payload, c.fieldName), x = c.value;
  if (v === undefined || v === null) return false;
  switch (c.operator) {
    case 'eq': return v === x;
    case 'ne': return v !== x;
    case 'le': return comparable(v, x) && v <= x;
    case 'lt': return comparable(v, x) && v < x;
    case 'ge': return comparable(v, x) && v >= x;
    case 'gt': return comparable(v, x) && v > x;
    case 'contains': return has(v, x);
    case 'notContains': return !has(v, x);
    case 'beginsWith': return typeof v === 'string' && v.startsWith(x);
    case 'in': return x.some((e) => e === v);
    case 'notIn': return !x.some((e) => e === v);
    case 'between': return comparable(v, x[0]) && v >= x[0] && v <= x[1];
    case 'containsAny': return x.some((e) => has(v, e));
  }
  throw new Error('operator ' + c.operator);
}
function match(payloadJSON, filterJSON) {
  const payload = JSON.parse(payloadJSON), filter = JSON.parse(filterJSON);
  return filter.filterGroup.some((g) => g.filters.every((c) => holds(payload, c)));
}
`

var (
	fields  = []string{"a", "b", "n.c", "missing", "n.missing"}
	scalars = []any{0.0, 1.0, 2.5, "", "a", "ab", "b", "ba", true, false}
	ops     = []string{"eq", "ne", "le", "lt", "ge", "gt", "contains", "notContains", "beginsWith", "in", "notIn", "between", "containsAny"}
)

func pick[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

func genValue(r *rand.Rand) any {
	switch r.IntN(6) {
	case 0:
		return nil
	case 1:
		list := []any{}
		for range r.IntN(4) {
			list = append(list, pick(r, scalars))
		}
		return list
	}
	return pick(r, scalars)
}

func genPayload(r *rand.Rand) map[string]any {
	p := map[string]any{"a": genValue(r), "b": genValue(r), "n": map[string]any{"c": genValue(r)}}
	if r.IntN(5) == 0 {
		p["n"] = genValue(r) // not an object: n.c is absent
	}
	return p
}

// genValueFor is a value the operator takes.
func genValueFor(r *rand.Rand, op string) any {
	numbersOrStrings := []any{0.0, 1.0, 2.5, "", "a", "ab", "b"}
	switch op {
	case "eq", "ne":
		return pick(r, scalars)
	case "le", "lt", "ge", "gt", "contains", "notContains":
		return pick(r, numbersOrStrings)
	case "beginsWith":
		return pick(r, []any{"", "a", "ab", "b"})
	case "in", "notIn", "containsAny":
		list := []any{}
		for range 1 + r.IntN(realtime.MaxInValues) {
			list = append(list, pick(r, scalars))
		}
		return list
	case "between":
		if r.IntN(2) == 0 {
			return []any{pick(r, []any{0.0, 1.0}), pick(r, []any{1.0, 2.5})}
		}
		return []any{pick(r, []any{"", "a"}), pick(r, []any{"ab", "b"})}
	}
	panic(op)
}

func genFilter(r *rand.Rand) map[string]any {
	var groups [][][3]any
	for range 1 + r.IntN(3) {
		var conds [][3]any
		for range 1 + r.IntN(3) {
			op := pick(r, ops)
			conds = append(conds, [3]any{pick(r, fields), op, genValueFor(r, op)})
		}
		groups = append(groups, conds)
	}
	return filterOf(groups...)
}
