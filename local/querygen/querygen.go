// Package querygen writes random valid GraphQL queries over a schema: the
// shapes client libraries produce (aliases, named and inline fragments at
// every level, named spreads inside inline fragments, fragments on Query
// that select root fields again, the same field repeated with other
// sub-selections, merged several levels deep, variables passed, left out and
// defaulted, @include and @skip on fields and spreads), for differential
// tests that run each query through two layouts and compare the answers.
//
// A query is valid by construction and checked by gqlparser's validator:
// every response key names one field with one set of arguments per type in
// the whole document, so that any two occurrences merge (GraphQL's
// OverlappingFieldsCanBeMerged), and fragments never spread themselves.
package querygen

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// Query is one generated request.
type Query struct {
	Text      string
	Variables map[string]any // the variables passed; those left out are absent
}

// Values gives the arguments that must name real data. Each returns the
// GraphQL literal of an argument of a root field.
type Values struct {
	// Root returns the arguments of a root field (such as `(handle:
	// "alice")`), or false to leave the field out.
	Root func(r *rand.Rand, field string) (string, bool)
	// DateTimes are AWSDateTime values for range arguments (after, before).
	DateTimes []string
}

// Generator writes queries over one schema.
type Generator struct {
	schema   *ast.Schema
	values   Values
	maxDepth int // levels of fields below the root field
}

// New returns a Generator whose queries nest at most maxDepth levels below
// their root fields.
func New(schema *ast.Schema, values Values, maxDepth int) *Generator {
	return &Generator{schema: schema, values: values, maxDepth: maxDepth}
}

// query is the state of one query being written.
type query struct {
	g    *Generator
	r    *rand.Rand
	vars []variable
	// keys binds each response key of a type to the field and arguments it
	// stands for, so that every occurrence of a key can merge.
	keys      map[string]map[string]string
	fragments []*fragment
}

type variable struct {
	name, typ, def string // def: the default's literal, "" for none
	value          any    // passed when set
	passed         bool
}

type fragment struct {
	name, typ string
	body      string
	height    int // levels of fields it nests
	done      bool
}

// Generate writes one valid query, or an error when none validated in a few
// tries (which is a bug of the generator).
func (g *Generator) Generate(r *rand.Rand) (Query, error) {
	var last error
	for range 20 {
		q := &query{g: g, r: r, keys: map[string]map[string]string{}}
		text, vars := q.document()
		_, errs := gqlparser.LoadQuery(g.schema, text)
		if len(errs) == 0 {
			return Query{Text: text, Variables: vars}, nil
		}
		last = fmt.Errorf("%v in\n%s", errs, text)
	}
	return Query{}, last
}

func (q *query) document() (string, map[string]any) {
	root := q.g.schema.Query
	var fields []rootField
	for _, f := range root.Fields {
		if strings.HasPrefix(f.Name, "__") {
			continue
		}
		args, ok := q.g.values.Root(q.r, f.Name)
		if !ok || args == "" && slices.ContainsFunc(f.Arguments, func(a *ast.ArgumentDefinition) bool { return a.Type.NonNull && a.DefaultValue == nil }) {
			continue // not asked for, or a root field Root gives no value for what it requires
		}
		for range 1 + q.r.IntN(2) { // a root field twice: under two keys, or merged
			key := q.responseKey(root.Name, f.Name, args)
			fields = append(fields, rootField{head: q.head(key, f.Name) + args, typ: q.g.schema.Types[f.Type.Name()]})
		}
	}
	var written []string
	for _, f := range fields {
		written = append(written, q.root(f))
	}
	if len(written) == 0 {
		written = append(written, "__typename")
	}
	written = q.rootFragments(fields, written)
	var b strings.Builder
	b.WriteString("query Q")
	if len(q.vars) > 0 {
		b.WriteString("(")
		for i, v := range q.vars {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("$" + v.name + ": " + v.typ)
			if v.def != "" {
				b.WriteString(" = " + v.def)
			}
		}
		b.WriteString(")")
	}
	b.WriteString(" { " + strings.Join(written, " ") + " }")
	for _, f := range q.fragments {
		b.WriteString("\nfragment " + f.name + " on " + f.typ + " " + f.body)
	}
	passed := map[string]any{}
	for _, v := range q.vars {
		if v.passed {
			passed[v.name] = v.value
		}
	}
	return b.String(), passed
}

// rootField is a field of Query as written: "key: name(args)", and its type.
type rootField struct {
	head string
	typ  *ast.Definition
}

// root writes a root field with a selection of its own (none for a scalar
// or an enum).
func (q *query) root(f rootField) string {
	if f.typ.Kind != ast.Object {
		return f.head
	}
	return f.head + " " + q.selection(f.typ, 1)
}

// rootFragments moves, at times, some of the written root fields into a
// fragment on Query, named or inline, spread at the root (with a directive
// at times), and selects one of them again there, under the same key, with
// another selection: the shape Relay composes from components, where a root
// field selected directly and again in a fragment merges into one
// execution, and nothing but the merged form tells the field's resolver
// what the other occurrence selects.
func (q *query) rootFragments(fields []rootField, written []string) []string {
	if len(fields) == 0 || q.r.IntN(2) != 0 {
		return written
	}
	var moved, kept []string
	for i, w := range written {
		if i > 0 && q.r.IntN(2) == 0 {
			moved = append(moved, w)
		} else {
			kept = append(kept, w)
		}
	}
	if again := fields[q.r.IntN(len(fields))]; len(moved) == 0 || q.r.IntN(2) == 0 {
		moved = append(moved, q.root(again))
	}
	body := "{ " + strings.Join(moved, " ") + " }"
	if q.r.IntN(3) == 0 {
		return append(kept, "... on Query"+q.directive()+" "+body)
	}
	f := &fragment{name: "F" + strconv.Itoa(len(q.fragments)+1), typ: q.g.schema.Query.Name, body: body, height: height(body), done: true}
	q.fragments = append(q.fragments, f)
	spread := "..." + f.name + q.directive()
	if q.r.IntN(3) == 0 { // a named spread inside an inline fragment
		spread = "... on Query { " + spread + " }"
	}
	return append(kept, spread)
}

// head is "key: name", or the name alone when the key is the name.
func (q *query) head(key, name string) string {
	if key == name {
		return name
	}
	return key + ": " + name
}

// responseKey picks the response key of field name with args on typ: its
// name, or an alias, each bound to one field and arguments per type.
func (q *query) responseKey(typ, name, args string) string {
	bound := q.keys[typ]
	if bound == nil {
		bound = map[string]string{}
		q.keys[typ] = bound
	}
	candidates := []string{name, "a", "b", "c", name + "2"}
	start := 0
	if q.r.IntN(2) == 0 {
		start = 1 + q.r.IntN(len(candidates)-1) // an alias
	}
	return bind(bound, name+args, append(candidates[start:], candidates[:start]...))
}

// bind returns the first of candidates that bound leaves free or binds to
// sig already, or a new key, bound to sig.
func bind(bound map[string]string, sig string, candidates []string) string {
	for _, key := range candidates {
		if s, ok := bound[key]; !ok || s == sig {
			bound[key] = sig
			return key
		}
	}
	key := fmt.Sprintf("k%d", len(bound))
	bound[key] = sig
	return key
}

// selection writes a selection set on typ at the given depth: fields,
// inline fragments and named fragment spreads, never empty.
func (q *query) selection(typ *ast.Definition, depth int) string {
	var items []string
	n := 1 + q.r.IntN(3)
	for len(items) < n {
		switch x := q.r.IntN(20); {
		case x < 2 && depth < q.g.maxDepth:
			items = append(items, "..."+q.directive()+" "+q.selection(typ, depth))
		case x < 3 && depth < q.g.maxDepth:
			inner := q.selection(typ, depth)
			if spread, ok := q.spread(typ, depth); ok && q.r.IntN(2) == 0 { // a named spread inside
				inner = "{ " + spread + " " + strings.TrimPrefix(inner, "{ ")
			}
			items = append(items, "... on "+typ.Name+q.directive()+" "+inner)
		case x < 6:
			if spread, ok := q.spread(typ, depth); ok {
				items = append(items, spread)
			}
		default:
			items = append(items, q.field(typ, depth))
		}
	}
	return "{ " + strings.Join(items, " ") + " }"
}

// spread spreads a named fragment on typ that fits the depth left: one
// written before, or a new one.
func (q *query) spread(typ *ast.Definition, depth int) (string, bool) {
	var fit []*fragment
	for _, f := range q.fragments {
		if f.done && f.typ == typ.Name && depth+f.height <= q.g.maxDepth+1 {
			fit = append(fit, f)
		}
	}
	if len(fit) > 0 && q.r.IntN(2) == 0 {
		return "..." + fit[q.r.IntN(len(fit))].name + q.directive(), true
	}
	if len(q.fragments) >= 6 {
		return "", false
	}
	f := &fragment{name: "F" + strconv.Itoa(len(q.fragments)+1), typ: typ.Name}
	q.fragments = append(q.fragments, f)
	f.body = q.selection(typ, depth)
	f.height = height(f.body)
	f.done = true
	return "..." + f.name + q.directive(), true
}

// height counts the levels of braces in a selection's text.
func height(text string) int {
	deepest, level := 0, 0
	for _, c := range text {
		switch c {
		case '{':
			level++
			deepest = max(deepest, level)
		case '}':
			level--
		}
	}
	return deepest
}

// field writes one field of typ, with arguments and, for an object, a
// selection; at times one written before at this type (the same key, field
// and arguments, merged with another sub-selection).
func (q *query) field(typ *ast.Definition, depth int) string {
	var fields []*ast.FieldDefinition
	for _, f := range typ.Fields {
		inner := q.g.schema.Types[f.Type.Name()]
		if strings.HasPrefix(f.Name, "__") || (inner.Kind == ast.Object && depth >= q.g.maxDepth) {
			continue
		}
		fields = append(fields, f)
	}
	// Repeat a key already bound on this type, with its field and arguments.
	if bound := q.keys[typ.Name]; len(bound) > 0 && q.r.IntN(3) == 0 {
		keys := make([]string, 0, len(bound))
		for k := range bound {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		key := keys[q.r.IntN(len(keys))]
		sig := bound[key]
		name, args, _ := strings.Cut(sig, "(")
		if args != "" {
			args = "(" + args
		}
		if def := typ.Fields.ForName(name); def != nil {
			inner := q.g.schema.Types[def.Type.Name()]
			if inner.Kind != ast.Object || depth < q.g.maxDepth {
				return q.write(key, def, args, depth)
			}
		}
	}
	def := fields[q.r.IntN(len(fields))]
	args := q.arguments(def)
	out := q.write(q.responseKey(typ.Name, def.Name, args), def, args, depth)
	if inner := q.g.schema.Types[def.Type.Name()]; inner.Kind == ast.Object && q.r.IntN(4) == 0 {
		// The same field again under an alias, with other arguments or the
		// same ones and another selection: two occurrences that one parent
		// may answer (or prefetch for) together.
		if q.r.IntN(2) == 0 {
			args = q.arguments(def)
		}
		out += " " + q.write(q.alias(typ.Name, def.Name, args), def, args, depth)
	}
	return out
}

// alias picks a response key for field name with args on typ that is not the
// name itself (responseKey may keep the name), bound as responseKey binds.
func (q *query) alias(typ, name, args string) string {
	// q.keys[typ] exists: responseKey made it for the first occurrence.
	return bind(q.keys[typ], name+args, []string{"a", "b", "c", name + "2"})
}

func (q *query) write(key string, def *ast.FieldDefinition, args string, depth int) string {
	out := q.head(key, def.Name) + args + q.directive()
	if inner := q.g.schema.Types[def.Type.Name()]; inner.Kind == ast.Object {
		out += " " + q.selection(inner, depth+1)
	}
	return out
}

// directive is at times an @include or @skip, with a literal or a variable.
func (q *query) directive() string {
	if q.r.IntN(10) != 0 {
		return ""
	}
	name := "include"
	if q.r.IntN(2) == 0 {
		name = "skip"
	}
	if q.r.IntN(2) == 0 {
		return fmt.Sprintf(" @%s(if: %t)", name, q.r.IntN(2) == 0)
	}
	return " @" + name + "(if: " + q.variable("Boolean", true, "true", "false") + ")"
}

// arguments writes the arguments of a field of an object: each left out,
// written as a literal, or a variable (passed, left out or defaulted).
func (q *query) arguments(def *ast.FieldDefinition) string {
	var parts []string
	for _, a := range def.Arguments {
		var lits []string
		odds := 2 // one in odds is written
		switch a.Type.Name() {
		case "Int":
			lits = []string{"1", "2", "3", "5", "20"}
		case "AWSDateTime": // rarer: a range can be empty, an error
			odds = 6
			for _, t := range q.g.values.DateTimes {
				lits = append(lits, strconv.Quote(t))
			}
		case "String": // nextToken: rarely, and never a real one (an error)
			odds = 40
			lits = []string{`"not-a-token"`}
		default:
			odds = 3
			if enum := q.g.schema.Types[a.Type.Name()]; enum != nil && enum.Kind == ast.Enum {
				for _, v := range enum.EnumValues {
					lits = append(lits, v.Name)
				}
			}
		}
		if len(lits) == 0 || q.r.IntN(odds) != 0 {
			continue
		}
		lit := lits[q.r.IntN(len(lits))]
		if q.r.IntN(3) == 0 {
			lit = q.variable(a.Type.Name(), a.Type.NonNull, lits...)
		}
		parts = append(parts, a.Name+": "+lit)
	}
	if len(parts) == 0 {
		return ""
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// variable declares a variable of the named type for a position that is
// non-null when required, and returns its $name. It is passed a value from
// lits, or left out, with or without a default from lits (a required one
// left out always has a default, so that the query stays valid).
func (q *query) variable(typ string, required bool, lits ...string) string {
	v := variable{name: "v" + strconv.Itoa(len(q.vars)+1), typ: typ}
	lit := func() string { return lits[q.r.IntN(len(lits))] }
	switch q.r.IntN(4) {
	case 0, 1: // passed, no default
		v.passed, v.value = true, literalValue(lit())
		if required {
			v.typ += "!"
		}
	case 2: // passed, with a default
		v.passed, v.value, v.def = true, literalValue(lit()), lit()
	default: // left out: with a default, or (where it may be null) without
		if required || q.r.IntN(2) == 0 {
			v.def = lit()
		}
	}
	q.vars = append(q.vars, v)
	return "$" + v.name
}

// literalValue is the JSON value of a literal the generator writes.
func literalValue(lit string) any {
	switch {
	case lit == "true" || lit == "false":
		return lit == "true"
	case strings.HasPrefix(lit, `"`):
		s, _ := strconv.Unquote(lit)
		return s
	}
	if n, err := strconv.Atoi(lit); err == nil {
		return n
	}
	return lit // an enum value
}
