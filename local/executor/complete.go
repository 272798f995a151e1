package executor

import (
	"encoding/json"
	"fmt"

	"github.com/vektah/gqlparser/v2/ast"
)

// Completing values: a resolver's result turned into the response tree
// and the objects of the next level, errors with their paths, and nulls
// propagated as the GraphQL specification says.

// complete sets n to v as a value of type typ, returning the objects whose
// fields are to be resolved at the next level.
func (r *run) complete(n *node, typ *ast.Type, v any, f collected) []*task {
	if v == nil {
		n.value = nil
		return nil
	}
	if typ.Elem != nil {
		list, ok := v.([]any)
		if !ok {
			r.fail(n, "GraphQLError", fmt.Sprintf("expected a list for %s", f.name))
			n.errored = true
			return nil
		}
		items := make([]*node, len(list))
		var next []*task
		for i, item := range list {
			items[i] = &node{nonNull: typ.Elem.NonNull, path: appendPath(n.path, i), field: f, parent: n.parent}
			next = append(next, r.complete(items[i], typ.Elem, item, f)...)
		}
		n.value = items
		return next
	}
	def := r.e.schema.Types[typ.NamedType]
	if def.IsLeafType() {
		n.value = v
		return nil
	}
	t := &task{typ: def, fields: r.collect(def, f.field.SelectionSet), out: &object{}, path: n.path}
	switch obj := v.(type) {
	case map[string]any:
		t.source = obj
	default:
		if !isIntrospection(obj) {
			r.fail(n, "GraphQLError", fmt.Sprintf("expected an object for %s", f.name))
			n.errored = true
			return nil
		}
		t.intro = obj
	}
	n.value = t.out
	return []*task{t}
}

func (r *run) fail(n *node, errType, message string) {
	e := Error{Message: message, ErrorType: errType, Path: n.path}
	if pos := n.field.field.Position; pos != nil {
		e.Locations = []Location{{pos.Line, pos.Column}}
	}
	r.mu.Lock()
	r.errors = append(r.errors, e)
	r.mu.Unlock()
}

// finish turns the result tree into JSON values and applies null
// propagation: a null in a non-null position makes its parent null, up to the
// nearest nullable field. invalid reports a null the parent must absorb.
func (r *run) finish(n *node) (value any, invalid bool) {
	switch v := n.value.(type) {
	case nil:
		if n.nonNull && !n.errored {
			r.fail(n, "GraphQLError", fmt.Sprintf("Cannot return null for non-nullable type: '%s' within parent '%s' (%s)",
				n.field.def.Type.Name(), n.parent, pathString(n.path)))
		}
		return nil, n.nonNull
	case []*node:
		out := make([]any, len(v))
		for i, item := range v {
			val, bad := r.finish(item)
			if bad {
				return nil, n.nonNull
			}
			out[i] = val
		}
		return out, false
	case *object:
		for _, key := range v.keys {
			val, bad := r.finish(v.fields[key])
			if bad {
				return nil, n.nonNull
			}
			v.values = append(v.values, val)
		}
		return v, false
	default:
		return v, false
	}
}

// nullsParent reports whether n completes to a null that its parent takes
// on (what finish reports as invalid), without reporting errors.
func nullsParent(n *node) bool {
	if n == nil {
		return false
	}
	switch v := n.value.(type) {
	case nil:
		return n.nonNull
	case []*node:
		for _, item := range v {
			if nullsParent(item) {
				return n.nonNull
			}
		}
	case *object:
		for _, key := range v.keys {
			if nullsParent(v.fields[key]) {
				return n.nonNull
			}
		}
	}
	return false
}

// node is one value of the response being built.
type node struct {
	value   any // nil, a leaf value, []*node, *object
	nonNull bool
	errored bool // an error was reported for this null already
	path    []any
	field   collected
	parent  string
}

// object is a response object: fields in selection order.
type object struct {
	keys   []string
	fields map[string]*node
	values []any // filled by finish
}

func (o *object) set(key string, n *node) {
	if o.fields == nil {
		o.fields = map[string]*node{}
	}
	if _, ok := o.fields[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.fields[key] = n
}

// MarshalJSON writes the object's fields in selection order.
func (o *object) MarshalJSON() ([]byte, error) {
	buf := []byte{'{'}
	for i, k := range o.keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		kb, _ := json.Marshal(k)
		buf = append(buf, kb...)
		buf = append(buf, ':')
		vb, err := json.Marshal(o.values[i])
		if err != nil {
			return nil, err
		}
		buf = append(buf, vb...)
	}
	return append(buf, '}'), nil
}

func appendPath(path []any, elem any) []any {
	out := make([]any, len(path), len(path)+1)
	copy(out, path)
	return append(out, elem)
}

func pathString(path []any) string {
	s := ""
	for _, p := range path {
		s += "/" + fmt.Sprint(p)
	}
	return s
}
