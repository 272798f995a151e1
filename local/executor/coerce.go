package executor

// Input coercion, as GraphQL specifies it (the spec's "Input Coercion" of
// each scalar, enum, list and input object, CoerceVariableValues and
// CoerceArgumentValues) and graphql-js and graphql-java apply it: a
// request's variables are coerced before any resolver runs, and a field's
// arguments reach its resolver in one shape whether written as literals or
// as variables (an ID written 5 is "5", a single value for a list is a list
// of one, [] is [], an Int is a 32-bit integer).

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
)

// inputError is a value coercion refuses: null where the type is non-null,
// or a value that is not of its type.
type inputError struct {
	null bool      // null (or absent) for the non-null type typ
	typ  *ast.Type // the type refused
	msg  string    // why, when not null
}

func (e *inputError) Error() string { return e.msg }

func invalid(t *ast.Type, format string, args ...any) *inputError {
	return &inputError{typ: t, msg: fmt.Sprintf(format, args...)}
}

// variableError is the error of variable name's refused value, in
// graphql-java's words (AppSync's: aws-appsync-community#406 for null).
func variableError(name string, err *inputError, at *ast.Position) Error {
	msg := fmt.Sprintf("Variable '%s' has an invalid value: %s", name, err.msg)
	if err.null {
		msg = fmt.Sprintf("Variable '%s' has coerced Null value for NonNull type '%s'", name, err.typ)
	}
	e := Error{Message: msg}
	if at != nil {
		e.Locations = []Location{{at.Line, at.Column}}
	}
	return e
}

// coercer coerces input values to a schema's types.
type coercer struct {
	schema   *ast.Schema
	defaults bool // fill input objects' fields left out with their defaults
}

// coercer coerces to e's schema, filling input objects' defaults unless e
// gives the inputs AWS documents.
func (e *Executor) coercer() coercer { return coercer{schema: e.schema, defaults: !e.documented} }

// variables coerces the request's variables to op's definitions: a
// variable left out takes its default (coerced as a literal) when it has
// one, and is left out otherwise; passed reports which were in raw.
func (c coercer) variables(op *ast.OperationDefinition, raw map[string]any) (map[string]any, *Error) {
	out := map[string]any{}
	for _, d := range op.VariableDefinitions {
		v, ok := raw[d.Variable]
		var (
			val any
			err *inputError
		)
		switch {
		case ok:
			val, err = c.value(v, d.Type)
		case d.DefaultValue != nil:
			val, _, err = c.literal(d.DefaultValue, d.Type, nil)
		case d.Type.NonNull:
			err = &inputError{null: true, typ: d.Type}
		default:
			continue
		}
		if err != nil {
			e := variableError(d.Variable, err, d.Position)
			return nil, &e
		}
		out[d.Variable] = val
	}
	return out, nil
}

// value coerces v, a value as JSON decodes it, to t.
func (c coercer) value(v any, t *ast.Type) (any, *inputError) {
	if v == nil {
		if t.NonNull {
			return nil, &inputError{null: true, typ: t}
		}
		return nil, nil
	}
	if t.Elem != nil {
		list, ok := v.([]any)
		if !ok { // a single value is a list of one
			item, err := c.value(v, t.Elem)
			return []any{item}, err
		}
		out := make([]any, len(list))
		for i, item := range list {
			var err *inputError
			if out[i], err = c.value(item, t.Elem); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	def := c.schema.Types[t.NamedType]
	switch def.Kind {
	case ast.Enum:
		s, ok := v.(string)
		if !ok || def.EnumValues.ForName(s) == nil {
			return nil, invalid(t, "Invalid input for Enum '%s'. No value found for name '%v'", def.Name, v)
		}
		return s, nil
	case ast.InputObject:
		return c.object(v, t, def)
	}
	return scalarValue(v, t)
}

// object coerces v to the input object def: every field of v known, every
// non-null field given (or defaulted).
func (c coercer) object(v any, t *ast.Type, def *ast.Definition) (any, *inputError) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalid(t, "Expected type '%s' but was '%s'.", def.Name, jsonKind(v))
	}
	for name := range m {
		if def.Fields.ForName(name) == nil {
			return nil, invalid(t, "The variables input contains a field name '%s' that is not defined for input object type '%s' ", name, def.Name)
		}
	}
	out := map[string]any{}
	for _, f := range def.Fields {
		fv, given := m[f.Name]
		switch {
		case given:
			val, err := c.value(fv, f.Type)
			if err != nil {
				return nil, err
			}
			out[f.Name] = val
		case f.DefaultValue != nil && c.defaults:
			val, _, err := c.literal(f.DefaultValue, f.Type, nil)
			if err != nil {
				return nil, err
			}
			out[f.Name] = val
		case f.Type.NonNull && f.DefaultValue == nil:
			return nil, &inputError{null: true, typ: f.Type}
		}
	}
	return out, nil
}

// scalarValue coerces v to the scalar t: Int a 32-bit integer (a JSON
// number with no fraction), Float any number, String and Boolean their
// own, ID a string or an integer (as a string); AppSync's scalars pass as
// given.
func scalarValue(v any, t *ast.Type) (any, *inputError) {
	if f, ok := number(v); ok {
		v = f
	}
	switch t.NamedType {
	case "Int":
		f, ok := v.(float64)
		if !ok || f != math.Trunc(f) {
			return nil, invalid(t, "Expected type 'Int' but was '%s'.", jsonKind(v))
		}
		if f < math.MinInt32 || f > math.MaxInt32 {
			return nil, invalid(t, "Expected value to be in the Integer range but it was '%s'", strconv.FormatFloat(f, 'f', -1, 64))
		}
		return int64(f), nil
	case "Float":
		if f, ok := v.(float64); ok {
			return f, nil
		}
	case "String":
		if s, ok := v.(string); ok {
			return s, nil
		}
	case "Boolean":
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case "ID":
		switch x := v.(type) {
		case string:
			return x, nil
		case float64:
			if x == math.Trunc(x) && math.Abs(x) < 1<<53 {
				return strconv.FormatInt(int64(x), 10), nil
			}
		}
	default:
		check, aws := awsScalars[t.NamedType]
		if !aws {
			return v, nil
		}
		if s, ok := v.(string); ok && check(s) {
			return s, nil
		}
		return nil, invalid(t, "Unable to parse %s as a valid %s.", jsonText(v), t.NamedType)
	}
	return nil, invalid(t, "Expected type '%s' but was '%s'.", t.NamedType, jsonKind(v))
}

// number is v as a float64 when v is a number: as JSON decodes it, or a Go
// integer (a caller in Go passes variables as it likes).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	}
	return 0, false
}

// jsonText is v as JSON writes it, for a message.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// jsonKind names v's JSON kind, as graphql-java names a value's class.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "String"
	case float64, json.Number:
		return "Number"
	case bool:
		return "Boolean"
	case []any:
		return "List"
	case map[string]any:
		return "Object"
	}
	return fmt.Sprintf("%T", v)
}

// arguments returns f's arguments coerced to their types, with vars the
// coerced variables; an argument not written (or naming a variable left
// out) takes its default, unless c gives the inputs AWS documents.
func (c coercer) arguments(f *ast.Field, vars map[string]any) map[string]any {
	args := map[string]any{}
	if f.Definition == nil {
		return args
	}
	for _, d := range f.Definition.Arguments {
		var (
			v       any
			present bool
		)
		if a := f.Arguments.ForName(d.Name); a != nil {
			v, present, _ = c.literal(a.Value, d.Type, vars) // its kind checked by validation
		}
		if !present && d.DefaultValue != nil && c.defaults {
			v, present, _ = c.literal(d.DefaultValue, d.Type, nil)
		}
		if present {
			args[d.Name] = v
		}
	}
	return args
}

// nullArgument is the field error of an argument of f that a variable
// passed as null makes null where its type is non-null (a variable with a
// default may stand there, and null is a value, not its absence:
// CoerceArgumentValues), or "" when there is none. Such a field is not
// resolved. The wording is graphql-java's.
func (c coercer) nullArgument(f *ast.Field, vars map[string]any) string {
	if f.Definition == nil {
		return ""
	}
	for _, d := range f.Definition.Arguments {
		a := f.Arguments.ForName(d.Name)
		if a == nil {
			continue
		}
		if _, _, err := c.literal(a.Value, d.Type, vars); err != nil && err.null {
			return fmt.Sprintf("Argument '%s' has coerced Null value for NonNull type '%s'", d.Name, err.typ)
		}
	}
	return ""
}

// Operation is a request's operation with its variables coerced, for the
// real-time endpoint's subscriptions: the arguments of its fields and the
// fields of its selections, as Execute gives and collects them.
type Operation struct {
	c   coercer
	run run // the document and the coerced variables: what arguments and collecting read
}

// Prepare coerces a request's variables to op's definitions (graphql-js's
// reading: defaults filled). A refused variable is an error with AppSync's
// message.
func Prepare(schema *ast.Schema, doc *ast.QueryDocument, op *ast.OperationDefinition, variables map[string]any) (*Operation, error) {
	c := coercer{schema: schema, defaults: true}
	vars, verr := c.variables(op, variables)
	if verr != nil {
		return nil, errors.New(verr.Message)
	}
	return &Operation{c: c, run: run{doc: doc, vars: vars}}, nil
}

// Depth is how many levels of fields op selects, as Execute measures it
// against the API's queryDepthLimit.
func (o *Operation) Depth(op *ast.OperationDefinition) int {
	return o.run.depth(op.SelectionSet, map[string]int{})
}

// NullArgument is the error of f's argument that a variable passed as null
// makes null where it may not be, or "" (nullArgument).
func (o *Operation) NullArgument(f *ast.Field) string { return o.c.nullArgument(f, o.run.vars) }

// Args are f's arguments as Execute gives them to its resolver.
func (o *Operation) Args(f *ast.Field) map[string]any { return o.c.arguments(f, o.run.vars) }

// Fields are the fields set selects on an object of type typ, as Execute
// collects them: fragments expanded (each once), @skip and @include
// applied, and the occurrences of a response key merged into one field,
// whose Alias is that key and whose selection is theirs together.
func (o *Operation) Fields(typ *ast.Definition, set ast.SelectionSet) []*ast.Field {
	collected := o.run.collect(typ, set)
	out := make([]*ast.Field, len(collected))
	for i, c := range collected {
		out[i] = c.field
	}
	return out
}

// literal coerces v, a value written in the document (checked by
// validation), to t, with vars the coerced variables; present is false for
// a variable left out.
func (c coercer) literal(v *ast.Value, t *ast.Type, vars map[string]any) (out any, present bool, err *inputError) {
	switch v.Kind {
	case ast.Variable:
		out, present = vars[v.Raw]
		if present && out == nil && t.NonNull { // passed null, its default notwithstanding
			return nil, true, &inputError{null: true, typ: t}
		}
		return out, present, nil
	case ast.NullValue:
		if t.NonNull {
			return nil, true, &inputError{null: true, typ: t}
		}
		return nil, true, nil
	}
	if t.Elem != nil {
		if v.Kind != ast.ListValue { // a single value is a list of one
			item, _, err := c.literal(v, t.Elem, vars)
			return []any{item}, true, err
		}
		list := make([]any, len(v.Children))
		for i, child := range v.Children {
			if list[i], _, err = c.literal(child.Value, t.Elem, vars); err != nil {
				return nil, true, err
			}
		}
		return list, true, nil
	}
	def := c.schema.Types[t.NamedType]
	if def.Kind == ast.InputObject {
		return c.literalObject(v, def, vars)
	}
	return scalarLiteral(v, t)
}

// literalObject coerces the object v to the input object def.
func (c coercer) literalObject(v *ast.Value, def *ast.Definition, vars map[string]any) (any, bool, *inputError) {
	out := map[string]any{}
	for _, f := range def.Fields {
		var (
			val     any
			present bool
			err     *inputError
		)
		if child := v.Children.ForName(f.Name); child != nil {
			val, present, err = c.literal(child, f.Type, vars)
		}
		if !present && f.DefaultValue != nil && c.defaults {
			val, present, err = c.literal(f.DefaultValue, f.Type, nil)
		}
		if err != nil {
			return nil, true, err
		}
		if present {
			out[f.Name] = val
		}
	}
	return out, true, nil
}

// untyped is v's value with no type to coerce it to (as graphql-js's
// valueFromASTUntyped): an Int an integer, [] an empty list.
func untyped(v *ast.Value) any {
	switch v.Kind {
	case ast.IntValue:
		if n, err := strconv.ParseInt(v.Raw, 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(v.Raw, 64)
		return f
	case ast.FloatValue:
		f, _ := strconv.ParseFloat(v.Raw, 64)
		return f
	case ast.BooleanValue:
		return v.Raw == "true"
	case ast.NullValue:
		return nil
	case ast.ListValue:
		out := make([]any, len(v.Children))
		for i, c := range v.Children {
			out[i] = untyped(c.Value)
		}
		return out
	case ast.ObjectValue:
		out := make(map[string]any, len(v.Children))
		for _, c := range v.Children {
			out[c.Name] = untyped(c.Value)
		}
		return out
	}
	return v.Raw // String, Block, Enum
}

// builtin are GraphQL's own scalars.
var builtin = map[string]bool{"Int": true, "Float": true, "String": true, "Boolean": true, "ID": true}

// scalarLiteral is a scalar or enum literal's value for t.
func scalarLiteral(v *ast.Value, t *ast.Type) (any, bool, *inputError) {
	switch {
	case v.Kind == ast.IntValue && t.NamedType == "Float", v.Kind == ast.FloatValue:
		f, err := strconv.ParseFloat(v.Raw, 64)
		if err != nil {
			return nil, true, invalid(t, "%s is not a valid 'Float'", v.Raw)
		}
		return f, true, nil
	case v.Kind == ast.IntValue && t.NamedType == "Int":
		n, err := strconv.ParseInt(v.Raw, 10, 32)
		if err != nil {
			return nil, true, invalid(t, "Expected value to be in the Integer range but it was '%s'", v.Raw)
		}
		return n, true, nil
	case v.Kind == ast.BooleanValue:
		return v.Raw == "true", true, nil
	case !builtin[t.NamedType] && v.Kind != ast.EnumValue: // AppSync's scalars: as written
		return untyped(v), true, nil
	}
	return v.Raw, true, nil // String, ID (an integer too), enum values
}
