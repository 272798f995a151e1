package resolver

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// Decoding an event's arguments (into each field's own struct, validated)
// and its source (only the members a resolver reads, without reflection for
// the common shapes).

// noArgs is the argument struct of fields without arguments.
type noArgs struct{}

func decodeArgs[A any](ev *appsync.Event) (A, error) {
	var args A
	if len(ev.Arguments) > 0 && string(ev.Arguments) != "null" {
		var err error
		if stringsOnly[A]() && ev.Arguments[0] == '{' { // {"id": "..."}: no reflection
			args, err = stringMembers[A](ev.Arguments)
		} else {
			err = json.Unmarshal(ev.Arguments, &args)
		}
		if err != nil {
			return args, errs.Wrap("resolver.arguments", errs.Validation, "invalid arguments for "+ev.Info.Field(), err)
		}
	}
	if v, ok := any(&args).(validator); ok {
		if err := v.validate(); err != nil {
			return args, err
		}
	}
	return args, nil
}

// decodeSource reads the parent object of a nested field: only the members S
// declares (a post's body, or the comments it carries for a sibling field,
// are skipped, not decoded).
func decodeSource[S any](ev *appsync.Event) (S, error) {
	if len(ev.Source) == 0 || string(ev.Source) == "null" {
		var none S
		return none, errs.Internalf("resolver.source", "%s: event has no source", ev.Info.Field())
	}
	if stringsOnly[S]() {
		return decodeStrings[S](ev)
	}
	return decodeJSON[S](ev)
}

// decodeJSON decodes a source into S with encoding/json, from the members S
// names (payload.Pick) when it names them: S escapes to the heap there, so
// it is declared here, not on decodeSource's path of string fields.
func decodeJSON[S any](ev *appsync.Event) (S, error) {
	var src S
	picked := []byte(ev.Source)
	if names := jsonNames[S](); names != nil {
		picked = payload.Pick(ev.Source, names...)
	}
	if err := json.Unmarshal(picked, &src); err != nil {
		return src, errs.Internalf("resolver.source", "%s: decode source: %v", ev.Info.Field(), err)
	}
	return src, nil
}

// decodeStrings decodes a source into S, a struct of string fields only, as
// encoding/json would (see stringMembers).
func decodeStrings[S any](ev *appsync.Event) (S, error) {
	src, err := stringMembers[S](ev.Source)
	if err != nil {
		return src, errs.Internalf("resolver.source", "%s: decode source: %v", ev.Info.Field(), err)
	}
	return src, nil
}

// stringMembers decodes the JSON object raw into S, a struct of string
// fields, as encoding/json would (null leaves a field empty, a non-string is
// an error). raw must be valid JSON: a slice of a validated payload, or JSON
// this program encoded.
func stringMembers[S any](raw []byte) (S, error) {
	var dst S
	err := setStrings(reflect.ValueOf(&dst).Elem(), raw)
	return dst, err
}

// setStrings is stringMembers on v, a struct of string fields only: apart
// from it, and from every other function here that reflection serves, so
// that its code is in the binary once, not once for each struct type it is
// instantiated with (a few kilobytes each).
func setStrings(v reflect.Value, raw []byte) error {
	names := jsonNamesOf(v.Type())
	var err error
	payload.Walk(raw, 0, func(key []byte, i int) int {
		end, _ := payload.Skip(raw, i)
		name := payload.FieldOf(key, names...)
		member := raw[i:end]
		if name == "" || err != nil || string(member) == "null" { // null leaves the field as it was
			return end
		}
		str, uerr := payload.Unquote(member)
		if uerr != nil || member[0] != '"' {
			err = fmt.Errorf("member %q is %.20s, not a string", name, member)
			return end
		}
		v.Field(slices.Index(names, name)).SetString(str)
		return end
	})
	return err
}

// stringsOnly reports whether S is a flat struct of exported, tagged string
// fields (each named by jsonNames, in field order).
func stringsOnly[S any]() bool { return stringsOnlyOf(reflect.TypeFor[S]()) }

func stringsOnlyOf(t reflect.Type) bool {
	if only, ok := stringsByType.Load(t); ok {
		return only.(bool)
	}
	only := t.Kind() == reflect.Struct && len(jsonNamesOf(t)) == t.NumField()
	for i := 0; only && i < t.NumField(); i++ {
		only = t.Field(i).IsExported() && t.Field(i).Type.Kind() == reflect.String
	}
	stringsByType.Store(t, only)
	return only
}

var stringsByType sync.Map // reflect.Type -> bool

// namesByType caches jsonNames.
var namesByType sync.Map // reflect.Type -> []string

// jsonNames returns the JSON member names of the struct type S's fields, or
// nil (decode everything) when S is not a flat struct of tagged fields.
func jsonNames[S any]() []string { return jsonNamesOf(reflect.TypeFor[S]()) }

func jsonNamesOf(t reflect.Type) []string {
	if names, ok := namesByType.Load(t); ok {
		return names.([]string)
	}
	var names []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous || name == "" {
			names = nil
			break
		}
		if name != "-" {
			names = append(names, name)
		}
	}
	namesByType.Store(t, names)
	return names
}

// validator is implemented by argument structs that check themselves.
type validator interface{ validate() error }
