package store_test

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/schema"
)

// Each field of the schema's stored types that the Lambda does not route
// is a field of its Go type, and each field the Go type answers (those, and
// what a child's resolver reads of its source: a like's userId) is stored
// under its own name: a read projects the attributes named as the selected
// fields, and the lists of a type's attributes are derived from its tags.
// A field added to the schema and not to the type, or stored under another
// name, fails here, naming it.
func TestEachFieldIsItsAttribute(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	checked := map[string]bool{}
	for _, v := range []any{store.User{}, store.Post{}, store.Comment{}, store.Follow{}, store.Like{}} {
		typ := reflect.TypeOf(v)
		checked[typ.Name()] = true
		def := sch.Types[typ.Name()]
		if def == nil {
			t.Errorf("the schema has no type %s", typ.Name())
			continue
		}
		var want []string // the type's fields the Lambda does not route
		for _, f := range def.Fields {
			if _, routed := resolver.NewRoutes().Find(def.Name + "." + f.Name); !routed && !strings.HasPrefix(f.Name, "__") {
				want = append(want, f.Name)
			}
		}
		var got []string
		for i := range typ.NumField() {
			field := typ.Field(i)
			name, _, _ := strings.Cut(field.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			got = append(got, name)
			if attr, _, _ := strings.Cut(field.Tag.Get("dynamodbav"), ","); attr != name {
				t.Errorf("%s.%s is the field %q and the attribute %q: a projection of the selection would not read it (name them alike)", typ.Name(), field.Name, name, attr)
			}
		}
		for _, f := range want {
			if !slices.Contains(got, f) {
				t.Errorf("%s.%s is neither routed (lambda/resolver/routes.go) nor a field of store.%s tagged json:%q dynamodbav:%q", def.Name, f, typ.Name(), f, f)
			}
		}
	}
	for _, r := range resolver.NewRoutes().All() {
		if def := sch.Types[r.Returns]; def != nil && def.Kind == ast.Object && !checked[r.Returns] {
			t.Errorf("%s returns a %s, whose Go type this test does not check: add it to the list above", r.Key(), r.Returns)
		}
	}
}
