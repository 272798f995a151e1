package routes_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/routes"
	"github.com/example/appsync-dynamo/schema"
)

// needsResolver reports whether a schema field can only be resolved by the
// Lambda: every Query and Mutation field, and every field whose value is
// another object (author, comments, ...), except a connection's items,
// which come with the connection. Scalars are attributes of their parent's
// item, but for those that depend on the caller (Post.likedByMe).
// Subscriptions are AppSync's own.
func needsResolver(s *ast.Schema, typ *ast.Definition, f *ast.FieldDefinition) bool {
	switch {
	case strings.HasPrefix(f.Name, "__"), typ == s.Subscription:
		return false
	case typ == s.Query, typ == s.Mutation, typ.Name == "Post" && f.Name == "likedByMe":
		return true
	case strings.HasSuffix(typ.Name, "Connection"), typ.Name == "TrendingPost": // members of what the parent returns
		return false
	}
	return s.Types[f.Type.Name()].Kind == ast.Object
}

func TestRoutesMatchTheSchema(t *testing.T) {
	s, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for name, typ := range s.Types {
		if typ.Kind != ast.Object || typ.BuiltIn || strings.HasPrefix(name, "__") {
			continue
		}
		for _, f := range typ.Fields {
			if needsResolver(s, typ, f) {
				want[name+"."+f.Name] = true
			}
		}
	}
	seen := map[string]bool{}
	for _, r := range routes.All {
		key := r.Key()
		if seen[key] {
			t.Errorf("%s is routed twice", key)
		}
		seen[key] = true
		typ := s.Types[r.Type]
		if typ == nil || typ.Fields.ForName(r.Field) == nil {
			t.Errorf("%s is routed but not in the schema", key)
			continue
		}
		if !want[key] {
			t.Errorf("%s is routed but needs no resolver", key)
		}
		defaults := map[string]any{}
		for _, a := range typ.Fields.ForName(r.Field).Arguments {
			if a.DefaultValue != nil {
				defaults[a.Name] = a.DefaultValue.Raw
			}
		}
		if len(defaults) != len(r.Defaults) || (len(defaults) > 0 && !reflect.DeepEqual(defaults, r.Defaults)) {
			t.Errorf("%s: Defaults %v; the schema's are %v", key, r.Defaults, defaults)
		}
		if returns, shape := valueOf(s, typ.Fields.ForName(r.Field).Type, r.Member); returns != r.Returns || shape != r.Shape {
			t.Errorf("%s: Returns %q, Shape %d; the schema says %q, %d", key, r.Returns, r.Shape, returns, shape)
		}
		if r.MaxBatchSize < 0 || r.MaxBatchSize > 2000 || (r.MaxBatchSize > 0 && (r.Type == "Query" || r.Type == "Mutation")) {
			t.Errorf("%s has batch size %d", key, r.MaxBatchSize)
		}
	}
	for key := range want {
		if !seen[key] {
			t.Errorf("schema field %s needs a resolver but routes.All has none", key)
		}
	}
}

// valueOf says which objects a field of type t holds, and how: a page's
// items, or the member of its items that member names.
func valueOf(s *ast.Schema, t *ast.Type, member string) (string, routes.Shape) {
	if t.Elem != nil {
		return t.Elem.Name(), routes.List
	}
	if def := s.Types[t.Name()]; strings.HasSuffix(def.Name, "Connection") {
		items := def.Fields.ForName("items").Type.Elem.Name()
		if f := s.Types[items].Fields.ForName(member); member != "" && f != nil {
			return f.Type.Name(), routes.Connection
		}
		return items, routes.Connection
	}
	return t.Name(), routes.One
}
