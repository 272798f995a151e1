// Package argjson is a speed-up: a resolver's arguments and source decoded
// into its struct without encoding/json's reflection where the struct is of
// string fields alone, and a source's members the struct does not name
// skipped, not decoded. Its fuzz tests hold it to
// encoding/json. lambda/resolver installs it by the line marked "speed-up:
// argjson"; deleting it turns it off: encoding/json decodes both.
package argjson

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// Args decodes raw, an event's arguments (valid JSON), into an A as
// json.Unmarshal does.
func Args[A any](raw []byte) (A, error) {
	if stringsOnly(reflect.TypeFor[A]()) && raw[0] == '{' { // {"id": "..."}
		return stringMembers[A](raw)
	}
	return unmarshal[A](raw)
}

// Source decodes raw, an event's source (a valid JSON object), into an S as
// json.Unmarshal does, reading only the members S's fields name.
func Source[S any](raw []byte) (S, error) {
	t := reflect.TypeFor[S]()
	if stringsOnly(t) {
		return stringMembers[S](raw)
	}
	if names := jsonNames(t); names != nil {
		raw = pick(raw, names)
	}
	return unmarshal[S](raw)
}

// stringMembers is setStrings into a new S: apart, as unmarshal is.
func stringMembers[S any](raw []byte) (S, error) {
	var dst S
	err := setStrings(reflect.ValueOf(&dst).Elem(), raw)
	return dst, err
}

// unmarshal is json.Unmarshal into a new T: apart, so that a T escapes to
// the heap on its path alone.
func unmarshal[T any](raw []byte) (T, error) {
	var v T
	err := json.Unmarshal(raw, &v)
	return v, err
}

// pick returns the JSON object raw with only the members that names select
// (as encoding/json matches keys to fields), every occurrence, in order:
// encoding/json decodes each, and a later null keeps an earlier value.
func pick(raw []byte, names []string) []byte {
	out := []byte{'{'}
	payload.Walk(raw, 0, func(key []byte, i int) int {
		end, _ := payload.Skip(raw, i)
		if payload.FieldOf(key, names...) != "" {
			if len(out) > 1 {
				out = append(out, ',')
			}
			out = append(append(append(out, key...), ':'), raw[i:end]...)
		}
		return end
	})
	return append(out, '}')
}

// setStrings decodes the JSON object raw into v, a struct of string fields
// only, as encoding/json would (null leaves a field as it was, a non-string
// is an error).
func setStrings(v reflect.Value, raw []byte) error {
	names := jsonNames(v.Type())
	var err error
	payload.Walk(raw, 0, func(key []byte, i int) int {
		end, _ := payload.Skip(raw, i)
		name := payload.FieldOf(key, names...)
		member := raw[i:end]
		if name == "" || err != nil || string(member) == "null" {
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

// stringsOnly reports whether t is a flat struct of exported, tagged string
// fields (each named by jsonNames, in field order).
func stringsOnly(t reflect.Type) bool {
	if only, ok := stringsByType.Load(t); ok {
		return only.(bool)
	}
	only := t.Kind() == reflect.Struct && len(jsonNames(t)) == t.NumField()
	for i := 0; only && i < t.NumField(); i++ {
		only = t.Field(i).IsExported() && t.Field(i).Type.Kind() == reflect.String
	}
	stringsByType.Store(t, only)
	return only
}

var (
	stringsByType sync.Map // reflect.Type -> bool
	namesByType   sync.Map // reflect.Type -> []string
)

// jsonNames returns the JSON member names of the struct type t's fields, or
// nil (decode everything) when t is not a flat struct of tagged fields.
func jsonNames(t reflect.Type) []string {
	if t.Kind() != reflect.Struct {
		return nil
	}
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
