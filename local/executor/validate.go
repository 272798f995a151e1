package executor

// Validating a request in time linear in its size. gqlparser's
// OverlappingFieldsCanBeMerged compares every pair of fields under one
// response key: a post with 8,000 copies of `author { name }`, or inline
// fragments nested two by two 14 levels deep, takes minutes of a core. The
// rule is replaced by one that checks the same thing in one pass: the
// schema has no interfaces or unions, so the fields merged under a response
// key all belong to one object type, and "same field, same arguments" is an
// equivalence that each field can be checked against the first for. Their
// sub-selections are then checked merged, once for each set of fields
// (fragments spread at many places reach the same set again).

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	"github.com/vektah/gqlparser/v2/validator/rules"
)

// overlapping is the name of the rule replaced.
const overlapping = "OverlappingFieldsCanBeMerged"

// standardRules are gqlparser's rules without overlapping.
var standardRules = func() *rules.Rules {
	r := rules.NewDefaultRules()
	r.RemoveRule(overlapping)
	r.AddRule(literalTypes, checkLiteralTypes)
	r.AddRule(singleRootKey, checkSingleRootKey)
	return r
}()

// Parse parses and validates a GraphQL request's document against schema as
// gqlparser.LoadQuery does, with fields merged under one response key
// checked in time linear in the document (see above), and the same
// messages.
func Parse(schema *ast.Schema, query string) (*ast.QueryDocument, gqlerror.List) {
	doc, errs, _ := parse(schema, query)
	return doc, errs
}

// parse is Parse, and how many fields the check of merged fields walked.
func parse(schema *ast.Schema, query string) (*ast.QueryDocument, gqlerror.List, int) {
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		if gqlErr, ok := err.(*gqlerror.Error); ok {
			return nil, gqlerror.List{gqlErr}, 0
		}
		return nil, gqlerror.List{gqlerror.Wrap(err)}, 0
	}
	if errs := validator.ValidateWithRules(schema, doc, standardRules); len(errs) > 0 {
		return nil, errs, 0
	}
	m := merging{doc: doc, checked: map[string]bool{}}
	for _, op := range doc.Operations {
		if c := m.conflict([]ast.SelectionSet{op.SelectionSet}); c != nil {
			err := gqlerror.ErrorPosf(c.at, `Fields "%s" conflict because %s. Use different aliases on the fields to fetch both if this was intentional.`, c.key, c.because)
			err.Rule = overlapping
			return nil, gqlerror.List{err}, m.walked
		}
	}
	return doc, nil, m.walked
}

// merging checks the fields of one document that merge.
type merging struct {
	doc     *ast.QueryDocument
	checked map[string]bool // sets of fields whose sub-selections are checked, by identity
	walked  int             // fields walked, for the test of its bound
}

// conflict is two fields under one response key that cannot merge.
type conflict struct {
	key, because string
	at           *ast.Position
}

// conflict returns the first conflict among the fields that sets select
// together (the selection sets of the occurrences of one field, merged), at
// this level or below, or nil.
func (m *merging) conflict(sets []ast.SelectionSet) *conflict {
	var keys []string
	groups := map[string][]*ast.Field{}
	visited := map[string]bool{} // a named fragment adds its fields once a level
	var walk func(ast.SelectionSet)
	walk = func(sel ast.SelectionSet) {
		for _, s := range sel {
			switch x := s.(type) {
			case *ast.Field:
				m.walked++
				key := responseKey(x)
				if _, ok := groups[key]; !ok {
					keys = append(keys, key)
				}
				groups[key] = append(groups[key], x)
			case *ast.InlineFragment:
				walk(x.SelectionSet)
			case *ast.FragmentSpread:
				if fd := m.doc.Fragments.ForName(x.Name); fd != nil && !visited[x.Name] {
					visited[x.Name] = true
					walk(fd.SelectionSet)
				}
			}
		}
	}
	for _, sel := range sets {
		walk(sel)
	}
	for _, key := range keys {
		fields := groups[key]
		first := fields[0]
		for _, f := range fields[1:] {
			switch {
			case f.Name != first.Name:
				return &conflict{key, fmt.Sprintf(`"%s" and "%s" are different fields`, first.Name, f.Name), f.Position}
			case !sameArguments(first.Arguments, f.Arguments):
				return &conflict{key, "they have differing arguments", f.Position}
			}
		}
		if len(fields) == 1 && len(first.SelectionSet) == 0 {
			continue
		}
		id := identity(fields)
		if m.checked[id] {
			continue
		}
		m.checked[id] = true
		below := make([]ast.SelectionSet, 0, len(fields))
		for _, f := range fields {
			below = append(below, f.SelectionSet)
		}
		if c := m.conflict(below); c != nil {
			return &conflict{key, fmt.Sprintf(`subfields "%s" conflict because %s`, c.key, c.because), c.at}
		}
	}
	return nil
}

// identity names a set of fields by the nodes it holds.
func identity(fields []*ast.Field) string {
	var b strings.Builder
	for _, f := range fields {
		b.WriteString(strconv.FormatUint(uint64(f.Position.Start), 36))
		b.WriteByte(',')
	}
	return b.String()
}

// sameArguments reports whether two fields' arguments are the same, in any
// order, values compared as written ($variables by name), input objects by
// name.
func sameArguments(a, b ast.ArgumentList) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		y := b.ForName(x.Name)
		if y == nil || !sameValue(x.Value, y.Value) {
			return false
		}
	}
	return true
}

func sameValue(a, b *ast.Value) bool {
	if a.Kind != b.Kind || a.Raw != b.Raw || len(a.Children) != len(b.Children) {
		return false
	}
	for i, c := range a.Children {
		other := b.Children[i].Value
		if a.Kind == ast.ObjectValue { // by name: input objects' order means nothing
			other = b.Children.ForName(c.Name)
		}
		if other == nil || !sameValue(c.Value, other) {
			return false
		}
	}
	return true
}
