package executor

import (
	"reflect"
	"strings"
	"unicode"

	"github.com/99designs/gqlgen/graphql/introspection"
)

// Introspection (__schema, __type) is answered from gqlgen's
// graphql/introspection, which wraps the parsed schema in Go values whose
// methods and fields are the introspection fields: Type.Kind(),
// Type.Fields(includeDeprecated), Field.Name, ... member finds the one a
// field names and converts what it returns into values the executor
// completes like any other.

// goNames are the introspection fields whose Go member has another name:
// the arguments and input fields that introspection reports are the visible
// (not deprecated unless asked) ones.
var goNames = map[string]string{"args": "VisibleArgs", "inputFields": "VisibleInputFields"}

// member returns the value of the introspection field name of obj (a pointer
// to one of gqlgen's introspection types), given the field's arguments.
func member(obj any, name string, args map[string]any) any {
	v := reflect.ValueOf(obj)
	goName, ok := goNames[name]
	if !ok {
		r := []rune(name)
		r[0] = unicode.ToUpper(r[0])
		goName = string(r)
	}
	if m := v.MethodByName(goName); m.IsValid() {
		in := make([]reflect.Value, m.Type().NumIn())
		for i := range in { // the only argument introspection methods take
			deprecated, _ := args["includeDeprecated"].(bool)
			in[i] = reflect.ValueOf(deprecated)
		}
		return introspected(m.Call(in)[0])
	}
	if f := v.Elem().FieldByName(goName); f.IsValid() {
		return introspected(f)
	}
	return nil
}

// introspected converts a member's value: nil pointers to nil, *string to
// string, slices to []any of pointers to their elements (whose methods have
// pointer receivers), and other values as they are.
func introspected(v reflect.Value) any {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		if s, ok := v.Interface().(*string); ok {
			return *s
		}
		return v.Interface()
	case reflect.Slice:
		out := make([]any, v.Len())
		for i := range out {
			if e := v.Index(i); e.Kind() == reflect.Struct {
				out[i] = e.Addr().Interface()
			} else {
				out[i] = e.Interface()
			}
		}
		return out
	}
	return v.Interface()
}

// isIntrospection reports whether v is one of gqlgen's introspection values.
func isIntrospection(v any) bool {
	t := reflect.TypeOf(v)
	return t != nil && t.Kind() == reflect.Pointer && strings.HasSuffix(t.Elem().PkgPath(), "graphql/introspection")
}

// schemaType returns the __type of the named type, or nil.
func (e *Executor) schemaType(name string) any {
	if def := e.schema.Types[name]; def != nil {
		return introspection.WrapTypeFromDef(e.schema, def)
	}
	return nil
}
