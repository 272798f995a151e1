package executor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/graphqljs"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// argSlot is a field whose argument the generator writes: op with its
// variable definitions at the first %s and the argument's value at the
// second, typ the argument's type as a variable declares it, def a value
// of it a variable's default may be.
type argSlot struct{ typ, op, field, def string }

var argSlots = []argSlot{
	{"ID!", `query%s { post(id: %s) { id } }`, "Query.post", `"p"`},
	{"ID!", `query%s { ...F } fragment F on Query { p: post(id: %s) { id } }`, "Query.post", `"p"`}, // an alias in a fragment
	{"[ID!]!", `query%s { posts(ids: %s) { id } }`, "Query.posts", `["p"]`},
	{"Int", `query%s { post(id: "p") { comments(limit: %s) { items { id } } } }`, "Post.comments", `5`},
	{"SortOrder", `query%s { post(id: "p") { comments(order: %s) { items { id } } } }`, "Post.comments", `OLDEST_FIRST`},
	{"AWSDateTime", `query%s { user(id: "u") { posts(after: %s) { items { id } } } }`, "User.posts", `"2024-05-01T10:00:00Z"`},
	{"AWSEmail!", `mutation%s { createUser(input: {handle: "h", name: "n", email: %s}) { id } }`, "Mutation.createUser", `"a@b.c"`},
	{"CreatePostInput!", `mutation%s { createPost(input: %s) { id } }`, "Mutation.createPost", `{title: "t", body: "b"}`},
	{"UpdatePostInput!", `mutation%s { updatePost(input: %s) { id } }`, "Mutation.updatePost", `{id: "p"}`},
}

// inputValues are the values written: as a variable's JSON and as a
// literal ("": not written that way). They are of every kind, at Int's
// edges and past them, enums in and out of case, lists empty, single and
// nested, input objects whole, short, defaulted and with unknown fields.
var inputValues = [][2]string{
	{`5`, `5`}, {`0`, `0`}, {`-1`, `-1`}, {`2147483647`, `2147483647`}, {`2147483648`, `2147483648`},
	{`-2147483648`, `-2147483648`}, {`-2147483649`, `-2147483649`}, {`99999999999`, `99999999999`},
	{`5.0`, `5.0`}, {`5.5`, `5.5`}, {`1e10`, `1e10`}, {`"5"`, `"5"`}, {`"x"`, `"x"`}, {`""`, `""`},
	{`"😀𝄞 ünï"`, `"😀𝄞 ünï"`}, {`true`, `true`}, {`null`, `null`},
	{`"NEWEST_FIRST"`, `"NEWEST_FIRST"`}, {`"newest_first"`, `"newest_first"`}, {`"OLDEST_FIRST"`, `OLDEST_FIRST`},
	{``, `NEWEST_FIRST`}, {``, `newest_first`}, {`"2024-05-01T10:00:00.000Z"`, `"2024-05-01T10:00:00.000Z"`},
	// AppSync's scalars, each side of their forms: a date and time's zone,
	// fraction, calendar and year; an address's parts and characters.
	{`"yesterday"`, `"yesterday"`}, {`"2024-05-01T10:00Z"`, `"2024-05-01T10:00Z"`}, {`"2024-05-01T10:00:00+05:30"`, `"2024-05-01T10:00:00+05:30"`},
	{`"2024-05-01T10:00:00-07:00:30"`, `"2024-05-01T10:00:00-07:00:30"`}, {`"2024-05-01T10:00:00"`, `"2024-05-01T10:00:00"`},
	{`"2024-05-01T10:00:00.123456789Z"`, `"2024-05-01T10:00:00.123456789Z"`}, {`"2024-05-01T10:00:00.1234567890Z"`, `"2024-05-01T10:00:00.1234567890Z"`},
	{`"2024-02-29T00:00Z"`, `"2024-02-29T00:00Z"`}, {`"2023-02-29T00:00Z"`, `"2023-02-29T00:00Z"`}, {`"2024-13-01T00:00Z"`, `"2024-13-01T00:00Z"`},
	{`"2024-05-01T24:00Z"`, `"2024-05-01T24:00Z"`}, {`"-0044-03-15T12:00Z"`, `"-0044-03-15T12:00Z"`}, {`"0001-01-01T00:00:00Z"`, `"0001-01-01T00:00:00Z"`},
	{`"a@b.c"`, `"a@b.c"`}, {`"not-an-email"`, `"not-an-email"`}, {`"first.last+tag@example.co.uk"`, `"first.last+tag@example.co.uk"`},
	{`"a..b@c"`, `"a..b@c"`}, {`"a b@c"`, `"a b@c"`}, {`"ü@example.de"`, `"ü@example.de"`}, {`"a@b@c"`, `"a@b@c"`}, {`"@c"`, `"@c"`},
	{`[]`, `[]`}, {`[5]`, `[5]`}, {`["a","b"]`, `["a", "b"]`}, {`[null]`, `[null]`}, {`[["a"]]`, `[["a"]]`}, {`[1.5]`, `[1.5]`},
	{`{}`, `{}`}, {`{"title":"t","body":"b"}`, `{title: "t", body: "b"}`}, {`{"title":"t"}`, `{title: "t"}`},
	{`{"title":"t","body":"b","status":"DRAFT"}`, `{title: "t", body: "b", status: DRAFT}`},
	{`{"title":"t","body":"b","status":"draft"}`, `{title: "t", body: "b", status: draft}`},
	{`{"title":"t","body":"b","x":1}`, `{title: "t", body: "b", x: 1}`}, {`{"title":"t","body":null}`, `{title: "t", body: null}`},
	{`{"id":"p","title":null}`, `{id: "p", title: null}`}, {`{"id":5}`, `{id: 5}`}, {`{"id":"p","tags":[]}`, `{id: "p", tags: []}`},
	{`{"title":5,"body":"b"}`, `{title: 5, body: "b"}`},
	{`"` + longest + `"`, `"` + longest + `"`}, {`{"title":"t","body":"` + longest + `"}`, `{title: "t", body: "` + longest + `"}`},
}

// longest is a body at the most the API accepts: 20,000 characters, of 4
// bytes each in UTF-8.
var longest = strings.Repeat("😀", 20000)

// argCase is one generated request and the field whose arguments it checks.
type argCase struct {
	Query     string         `json:"query"`
	Variables map[string]any `json:"variables"`
	Field     string         `json:"field"`
}

// argOutcome is what a request's field got: refused before any resolver
// ran, or its arguments.
type argOutcome struct {
	Refused bool           `json:"refused"`
	Args    map[string]any `json:"args"`
}

// generateArgCases writes n requests, each one slot's argument as a
// literal, a variable passed, or a variable left out.
func generateArgCases(r *rand.Rand, n int) []argCase {
	out := make([]argCase, 0, n)
	for len(out) < n {
		s, v := argSlots[r.IntN(len(argSlots))], inputValues[r.IntN(len(inputValues))]
		switch form := r.IntN(6); {
		case form < 2 && v[1] != "":
			out = append(out, argCase{Query: fmt.Sprintf(s.op, "", v[1]), Field: s.field})
		case form < 4 && v[0] != "":
			var val any
			if err := json.Unmarshal([]byte(v[0]), &val); err != nil {
				panic(err)
			}
			out = append(out, argCase{Query: fmt.Sprintf(s.op, "($v: "+s.typ+")", "$v"), Variables: map[string]any{"v": val}, Field: s.field})
		case form == 4:
			out = append(out, argCase{Query: fmt.Sprintf(s.op, "($v: "+s.typ+")", "$v"), Variables: map[string]any{}, Field: s.field})
		case form == 5: // a nullable variable with a default, passed null: null is a value, not its absence
			out = append(out, argCase{Query: fmt.Sprintf(s.op, "($v: "+strings.TrimSuffix(s.typ, "!")+" = "+s.def+")", "$v"), Variables: map[string]any{"v": nil}, Field: s.field})
		}
	}
	return out
}

// argsRecorder is a Lambda that records each event's arguments and answers
// every field with an empty object, so that execution reaches the children.
type argsRecorder struct {
	mu     sync.Mutex
	events int
	args   map[string]json.RawMessage // by field, the first event's
}

func (a *argsRecorder) Invoke(_ context.Context, payload []byte) ([]byte, error) {
	evs, batch, err := appsync.Decode(payload)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.events += len(evs)
	for _, ev := range evs {
		if _, ok := a.args[ev.Info.Field()]; !ok {
			a.args[ev.Info.Field()] = ev.Arguments
		}
	}
	if !batch {
		return []byte(`{}`), nil
	}
	return append(append([]byte{'['}, bytes.Repeat([]byte(`{"data":{}},`), len(evs))[:12*len(evs)-1]...), ']'), nil
}

// The local AppSync refuses what graphql-js refuses and passes each
// argument as graphql-js coerces it, whether written as a literal or as a
// variable: 3,000 generated requests, each run through both. A refused
// request invokes nothing.
func TestInputsAreCoercedAsGraphQLJSCoercesThem(t *testing.T) {
	cases := generateArgCases(rand.New(rand.NewPCG(52, 0x5eed)), 3000)
	want := graphqlJS(t, cases)
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	refused, differ := 0, 0
	for i, c := range cases {
		got, resp := outcome(t, sch, c)
		// Under AWS's documented inputs, no default is filled in: the same
		// requests are refused, and what arguments there are are graphql-js's.
		documented, _ := outcome(t, sch, c, executor.WithDocumentedInputs())
		for name, v := range documented.Args {
			if !within(v, want[i].Args[name]) {
				t.Errorf("%s %v: documented inputs give %s %v, graphql-js %v", c.Query, c.Variables, name, v, want[i].Args[name])
			}
		}
		if documented.Refused != got.Refused {
			t.Errorf("%s %v: refused %v under documented inputs, %v under graphql-js's", c.Query, c.Variables, documented.Refused, got.Refused)
		}
		if got.Refused {
			refused++
			for _, e := range resp.Errors {
				if e.ErrorType != "" || len(e.Locations) == 0 {
					t.Errorf("%s %v: a refusal with errorType %q, locations %v", c.Query, c.Variables, e.ErrorType, e.Locations)
				}
			}
		}
		if got.Refused != want[i].Refused || !got.Refused && !reflect.DeepEqual(got.Args, want[i].Args) {
			if differ++; differ <= 10 {
				t.Errorf("%s %v:\n  local   %+v (errors %+v)\n  graphql-js %+v", c.Query, c.Variables, got, resp.Errors, want[i])
			}
		}
	}
	if refused < len(cases)/5 || refused > len(cases)*4/5 {
		t.Errorf("%d of %d refused: the generator no longer mixes valid and invalid inputs", refused, len(cases))
	}
	t.Logf("%d requests, %d refused, %d differ from graphql-js", len(cases), refused, differ)
}

// within reports whether got is want with defaults left out: an input
// object's fields a subset of want's, each within its own.
func within(got, want any) bool {
	g, ok := got.(map[string]any)
	w, ok2 := want.(map[string]any)
	if !ok || !ok2 {
		return reflect.DeepEqual(got, want)
	}
	for k, v := range g {
		if !within(v, w[k]) {
			return false
		}
	}
	return true
}

// outcome runs c through a local AppSync whose Lambda records arguments.
func outcome(t *testing.T, sch *ast.Schema, c argCase, opts ...executor.Option) (argOutcome, executor.Response) {
	rec := &argsRecorder{args: map[string]json.RawMessage{}}
	e := executor.New(sch, rec, resolver.CoreRoutes, append(opts, executor.WithDirectResolvers())...)
	resp := e.Execute(t.Context(), executor.Request{Query: c.Query, Variables: c.Variables, Identity: signedIn("u")})
	// Refused: errors of the request, none of a field's (which has a path).
	got := argOutcome{Refused: rec.events == 0 && len(resp.Errors) > 0 && !slices.ContainsFunc(resp.Errors, func(e executor.Error) bool { return len(e.Path) > 0 })}
	if raw, ok := rec.args[c.Field]; ok {
		if err := json.Unmarshal(raw, &got.Args); err != nil {
			t.Fatal(err)
		}
	}
	return got, resp
}

// graphqlJS runs cases through graphql-js (testdata/coerce.cjs), over the
// schema as AppSync loads it.
func graphqlJS(t *testing.T, cases []argCase) []argOutcome {
	t.Helper()
	var outcomes []argOutcome
	graphqljs.Run(t, "testdata/coerce.cjs", map[string]any{"sdl": schema.AppSyncPrelude + schema.SDL, "cases": cases}, &outcomes)
	if len(outcomes) != len(cases) {
		t.Fatalf("graphql-js answered %d outcomes for %d cases", len(outcomes), len(cases))
	}
	return outcomes
}

// Every AppSync scalar the schema (with every feature's part) uses is
// checked on input as AppSync documents it: one added to the schema
// without its check in awsscalars.go fails here.
func TestEveryAWSScalarIsChecked(t *testing.T) {
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		t.Fatal(err)
	}
	for name, def := range sch.Types {
		if def.Kind == ast.Scalar && strings.HasPrefix(name, "AWS") && executor.AWSScalars[name] == nil && used(sch, name) {
			t.Errorf("the schema uses %s, which local/executor/awsscalars.go does not check", name)
		}
	}
	for name, valid := range map[string][2]string{"AWSDateTime": {"2024-05-01T10:00Z", "2024-05-01"}, "AWSEmail": {"a@b.c", "a"}} {
		if check := executor.AWSScalars[name]; check == nil || !check(valid[0]) || check(valid[1]) {
			t.Errorf("%s's check takes %q and %q wrongly", name, valid[0], valid[1])
		}
	}
}

// used reports whether a field or argument of sch has the type name.
func used(sch *ast.Schema, name string) bool {
	for _, def := range sch.Types {
		for _, f := range def.Fields {
			if f.Type.Name() == name {
				return true
			}
			for _, a := range f.Arguments {
				if a.Type.Name() == name {
					return true
				}
			}
		}
	}
	return false
}
