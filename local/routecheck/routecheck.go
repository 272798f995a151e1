// Package routecheck holds a table of routed fields to the schema it serves,
// for the tests of the core (lambda/resolver/routes.go) and of each feature: every field
// that needs the Lambda is routed once, and each route says what the schema
// does of its value, its arguments' defaults and its batch size.
package routecheck

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/resolver"
)

// Match checks table against s: each route's field is in the schema and
// needs a resolver, its Defaults are the schema's default arguments, its
// Returns and Shape what the schema's type says, its batch size one
// AppSync takes; and every schema field that needs a resolver is routed.
func Match(t testing.TB, s *ast.Schema, table *resolver.Routes) {
	t.Helper()
	want := needed(s, table)
	seen := map[string]bool{}
	for _, r := range table.All() {
		key := r.Key()
		seen[key] = true
		typ := s.Types[r.Type]
		if typ == nil || typ.Fields.ForName(r.Field) == nil {
			t.Errorf("%s is routed but not in the schema", key)
			continue
		}
		if !want[key] && !r.Subscribes() {
			t.Errorf("%s is routed but needs no resolver", key)
		}
		field := typ.Fields.ForName(r.Field)
		defaults := map[string]any{}
		for _, a := range field.Arguments {
			if a.DefaultValue != nil {
				defaults[a.Name] = a.DefaultValue.Raw
			}
		}
		if len(defaults) != len(r.Defaults) || (len(defaults) > 0 && !reflect.DeepEqual(defaults, r.Defaults)) {
			t.Errorf("%s: Defaults %v; the schema's are %v", key, r.Defaults, defaults)
		}
		if returns, shape := valueOf(s, field.Type, r.Member); returns != r.Returns || shape != r.Shape {
			t.Errorf("%s: Returns %q, Shape %d; the schema says %q, %d", key, r.Returns, r.Shape, returns, shape)
		}
		if r.MaxBatchSize < 0 || r.MaxBatchSize > 2000 || (r.MaxBatchSize > 0 && !r.EarlyReturn()) {
			t.Errorf("%s has batch size %d", key, r.MaxBatchSize)
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("schema field %s needs a resolver but is not routed", key)
		}
	}
}

// needed are the schema fields only the Lambda can resolve: every Query and
// Mutation field, and every field whose value is another object (author,
// comments, ...), except a connection's items, which come with the
// connection, and the members of items, or of a value, that carry the
// object (a route's Member). Scalars are attributes of their parent's item, but for those that
// depend on the caller (Post.likedByMe). Subscriptions are AppSync's own; a
// routed one is a subscription the Lambda authorizes (lambda/live).
func needed(s *ast.Schema, table *resolver.Routes) map[string]bool {
	carriers := map[string]bool{} // item types whose Member carries the object
	for _, r := range table.All() {
		f := s.Types[r.Type].Fields.ForName(r.Field)
		switch {
		case r.Member == "" || f == nil:
		case r.Shape == resolver.One: // the value itself carries it (FeedPush.post)
			carriers[f.Type.Name()] = true
		case s.Types[f.Type.Name()] != nil && s.Types[f.Type.Name()].Fields.ForName("items") != nil:
			carriers[s.Types[f.Type.Name()].Fields.ForName("items").Type.Name()] = true
		}
	}
	want := map[string]bool{}
	for name, typ := range s.Types {
		if typ.Kind != ast.Object || typ.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			switch {
			case strings.HasPrefix(f.Name, "__"), typ == s.Subscription, strings.HasSuffix(typ.Name, "Connection"), carriers[typ.Name]:
			case typ == s.Query, typ == s.Mutation, typ.Name == "Post" && f.Name == "likedByMe", s.Types[f.Type.Name()].Kind == ast.Object:
				want[name+"."+f.Name] = true
			}
		}
	}
	return want
}

// valueOf says which objects a field of type t holds, and how: a page's
// items, or the member of its items that member names.
func valueOf(s *ast.Schema, t *ast.Type, member string) (string, resolver.Shape) {
	if t.Elem != nil {
		return t.Elem.Name(), resolver.List
	}
	if def := s.Types[t.Name()]; strings.HasSuffix(def.Name, "Connection") {
		items := def.Fields.ForName("items").Type.Elem.Name()
		if f := s.Types[items].Fields.ForName(member); member != "" && f != nil {
			return f.Type.Name(), resolver.Connection
		}
		return items, resolver.Connection
	}
	return t.Name(), resolver.One
}
