package executor

import (
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
)

// introspect builds the __schema object of s as plain maps, which the
// executor reads like any resolver-less object. Fields that take arguments
// (fields, enumValues, inputFields, args) are functions of them. Type
// references point at the shared type objects, so any depth can be selected.
func introspect(s *ast.Schema) (map[string]any, map[string]map[string]any) {
	types := make(map[string]map[string]any, len(s.Types))
	for name, def := range s.Types {
		types[name] = map[string]any{"kind": string(def.Kind), "name": name, "description": nullable(def.Description), "specifiedByURL": nil}
	}
	var ref func(t *ast.Type) any
	ref = func(t *ast.Type) any {
		switch {
		case t.NonNull:
			inner := *t
			inner.NonNull = false
			return map[string]any{"kind": "NON_NULL", "name": nil, "ofType": ref(&inner)}
		case t.Elem != nil:
			return map[string]any{"kind": "LIST", "name": nil, "ofType": ref(t.Elem)}
		default:
			return types[t.NamedType]
		}
	}
	inputValues := func(args ast.ArgumentDefinitionList) []any {
		out := []any{}
		for _, a := range args {
			var def any
			if a.DefaultValue != nil {
				def = a.DefaultValue.String()
			}
			out = append(out, map[string]any{"name": a.Name, "description": nullable(a.Description), "type": ref(a.Type),
				"defaultValue": def, "isDeprecated": false, "deprecationReason": nil})
		}
		return out
	}
	for name, def := range s.Types {
		t := types[name]
		t["ofType"] = nil
		t["fields"], t["interfaces"], t["possibleTypes"], t["enumValues"], t["inputFields"] = nil, nil, nil, nil, nil
		switch def.Kind {
		case ast.Object, ast.Interface:
			var fields []any
			for _, f := range def.Fields {
				if strings.HasPrefix(f.Name, "__") {
					continue
				}
				dep := f.Directives.ForName("deprecated")
				fields = append(fields, map[string]any{"name": f.Name, "description": nullable(f.Description),
					"args": func(map[string]any) any { return inputValues(f.Arguments) }, "type": ref(f.Type),
					"isDeprecated": dep != nil, "deprecationReason": deprecationReason(dep)})
			}
			t["fields"] = func(map[string]any) any { return fields }
			var ifaces []any
			for _, i := range def.Interfaces {
				ifaces = append(ifaces, types[i])
			}
			t["interfaces"] = append([]any{}, ifaces...)
		case ast.Enum:
			var values []any
			for _, v := range def.EnumValues {
				dep := v.Directives.ForName("deprecated")
				values = append(values, map[string]any{"name": v.Name, "description": nullable(v.Description),
					"isDeprecated": dep != nil, "deprecationReason": deprecationReason(dep)})
			}
			t["enumValues"] = func(map[string]any) any { return values }
		case ast.InputObject:
			var fields ast.ArgumentDefinitionList
			for _, f := range def.Fields {
				fields = append(fields, &ast.ArgumentDefinition{Name: f.Name, Description: f.Description, Type: f.Type, DefaultValue: f.DefaultValue})
			}
			t["inputFields"] = func(map[string]any) any { return inputValues(fields) }
		}
		if def.Kind == ast.Interface || def.Kind == ast.Union {
			var possible []any
			for _, p := range s.GetPossibleTypes(def) {
				possible = append(possible, types[p.Name])
			}
			t["possibleTypes"] = possible
		}
	}
	all := make([]any, 0, len(types))
	for _, name := range sortedKeys(types) {
		all = append(all, types[name])
	}
	var directives []any
	for _, name := range sortedKeys(s.Directives) {
		d := s.Directives[name]
		locs := make([]any, len(d.Locations))
		for i, l := range d.Locations {
			locs[i] = string(l)
		}
		directives = append(directives, map[string]any{"name": d.Name, "description": nullable(d.Description), "locations": locs,
			"args": func(map[string]any) any { return inputValues(d.Arguments) }, "isRepeatable": d.IsRepeatable})
	}
	schema := map[string]any{"description": nil, "types": all, "directives": directives,
		"queryType": typeOrNil(types, s.Query), "mutationType": typeOrNil(types, s.Mutation), "subscriptionType": typeOrNil(types, s.Subscription)}
	return schema, types
}

func typeOrNil(types map[string]map[string]any, def *ast.Definition) any {
	if def == nil {
		return nil
	}
	return types[def.Name]
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func deprecationReason(d *ast.Directive) any {
	if d == nil {
		return nil
	}
	if r := d.Arguments.ForName("reason"); r != nil {
		return r.Value.Raw
	}
	return "No longer supported"
}
