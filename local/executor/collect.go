package executor

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// collected is a field of a selection set after fragments are expanded and
// fields with the same response key are merged (GraphQL's CollectFields).
type collected struct {
	key   string // the response key: alias or name
	name  string
	def   *ast.FieldDefinition
	field *ast.Field // with the merged sub-selection
	first *ast.Field // the first occurrence, as written
}

// described is the selection the field's resolver is told of in info: that
// of every occurrence merged, or, under the first-occurrence reading, that
// of the first occurrence alone (WithSelectionReading). Execution always
// merges them.
func (r *run) described(c collected) ast.SelectionSet {
	if r.e.reading == appsync.FirstOccurrence {
		return c.first.SelectionSet
	}
	return c.field.SelectionSet
}

// args are the field's arguments as its resolver gets them: with the
// schema's defaults filled in, unless the executor gives the inputs AWS
// documents (WithDocumentedInputs).
//
// Each is coerced to its type (coerce.go): the same value reaches the
// resolver whether written as a literal or as a variable.
func (r *run) args(c collected) map[string]any {
	return r.e.coercer().arguments(c.field, r.vars)
}

// collect returns the fields sel selects on an object of type typ, in order.
// As GraphQL's CollectFields, it expands each named fragment once in a
// selection set, however often it is spread there: a query whose fragments
// each spread the next one twice costs a fragment's length, not 2^levels.
func (r *run) collect(typ *ast.Definition, sel ast.SelectionSet) []collected {
	var out []collected
	index := map[string]int{}
	visited := map[string]bool{}
	var more [][]ast.SelectionSet // by out's index: the later occurrences' sub-selections
	var walk func(ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				if !r.included(x.Directives) {
					continue
				}
				key := responseKey(x)
				if i, ok := index[key]; ok {
					more[i] = append(more[i], x.SelectionSet)
					continue
				}
				def := x.Definition
				if def == nil {
					def = typ.Fields.ForName(x.Name)
				}
				index[key] = len(out)
				out = append(out, collected{key: key, name: x.Name, def: def, field: x, first: x})
				more = append(more, nil)
			case *ast.InlineFragment:
				if r.included(x.Directives) && (x.TypeCondition == "" || x.TypeCondition == typ.Name) {
					walk(x.SelectionSet)
				}
			case *ast.FragmentSpread:
				fd := r.doc.Fragments.ForName(x.Name)
				if r.included(x.Directives) && fd != nil && fd.TypeCondition == typ.Name && !visited[x.Name] {
					visited[x.Name] = true
					walk(fd.SelectionSet)
				}
			}
		}
	}
	walk(sel)
	for i, sets := range more { // each merged field's sub-selection, built once
		if len(sets) == 0 {
			continue
		}
		n := len(out[i].field.SelectionSet)
		for _, set := range sets {
			n += len(set)
		}
		merged := *out[i].field
		merged.SelectionSet = append(make(ast.SelectionSet, 0, n), merged.SelectionSet...)
		for _, set := range sets {
			merged.SelectionSet = append(merged.SelectionSet, set...)
		}
		out[i].field = &merged
	}
	return out
}

// responseKey is the key of a field in the response: its alias, or its name.
func responseKey(f *ast.Field) string {
	if f.Alias != "" {
		return f.Alias
	}
	return f.Name
}

// included applies @skip and @include.
func (r *run) included(ds ast.DirectiveList) bool {
	if d := ds.ForName("skip"); d != nil && d.ArgumentMap(r.vars)["if"] == true {
		return false
	}
	if d := ds.ForName("include"); d != nil && d.ArgumentMap(r.vars)["if"] == false {
		return false
	}
	return true
}

// selectionList is AppSync's info.selectionSetList for a field's
// sub-selection: every selected path, slash-joined, aliases in place of
// names, fragments expanded, no arguments. A fragment spread again under the
// same path adds no path: it is expanded once per path.
func (r *run) selectionList(sel ast.SelectionSet) []string {
	out := []string{}
	seen := map[string]bool{}
	expanded := map[string]bool{} // fragment name and path

	var walk func(ast.SelectionSet, string)
	walk = func(sel ast.SelectionSet, prefix string) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				if !r.included(x.Directives) {
					continue
				}
				path := prefix + responseKey(x)
				if !seen[path] {
					seen[path] = true
					out = append(out, path)
				}
				walk(x.SelectionSet, path+"/")
			case *ast.InlineFragment:
				walk(x.SelectionSet, prefix)
			case *ast.FragmentSpread:
				if fd := r.doc.Fragments.ForName(x.Name); fd != nil && !expanded[x.Name+"\x00"+prefix] {
					expanded[x.Name+"\x00"+prefix] = true
					walk(fd.SelectionSet, prefix)
				}
			}
		}
	}
	walk(sel, "")
	return out
}

// selectionGraphQL is AppSync's info.selectionSetGraphQL: the sub-selection
// as GraphQL text, with aliases, arguments and inline fragments, and named
// fragment spreads left as they are. "" for a field without sub-selection.
func selectionGraphQL(sel ast.SelectionSet) string {
	if len(sel) == 0 {
		return ""
	}
	var b strings.Builder
	writeSelection(&b, sel, 0)
	return b.String()
}

func writeSelection(b *strings.Builder, sel ast.SelectionSet, depth int) {
	b.WriteString("{\n")
	indent := strings.Repeat("  ", depth+1)
	for _, s := range sel {
		b.WriteString(indent)
		switch x := s.(type) {
		case *ast.Field:
			if x.Alias != "" && x.Alias != x.Name {
				b.WriteString(x.Alias + ": ")
			}
			b.WriteString(x.Name)
			writeArguments(b, x.Arguments)
			writeDirectives(b, x.Directives)
			if len(x.SelectionSet) > 0 {
				b.WriteString(" ")
				writeSelection(b, x.SelectionSet, depth+1)
			}
		case *ast.InlineFragment:
			b.WriteString("...")
			if x.TypeCondition != "" {
				b.WriteString(" on " + x.TypeCondition)
			}
			writeDirectives(b, x.Directives)
			b.WriteString(" ")
			writeSelection(b, x.SelectionSet, depth+1)
		case *ast.FragmentSpread:
			b.WriteString("..." + x.Name)
			writeDirectives(b, x.Directives)
		}
		b.WriteString("\n")
	}
	b.WriteString(strings.Repeat("  ", depth) + "}")
}

func writeDirectives(b *strings.Builder, ds ast.DirectiveList) {
	for _, d := range ds {
		b.WriteString(" @" + d.Name)
		writeArguments(b, d.Arguments)
	}
}

// writeArguments writes "(name: value, ...)" as written, $variables included.
func writeArguments(b *strings.Builder, args ast.ArgumentList) {
	if len(args) == 0 {
		return
	}
	b.WriteString("(")
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.Name + ": " + a.Value.String())
	}
	b.WriteString(")")
}
