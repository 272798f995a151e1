package store

import (
	"reflect"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// Entities read in part (a projection): what was read, and their JSON
// written with what was read alone, so that an attribute not read is never
// answered as its zero value.

// schemaAttributes are the item attribute names (dynamodbav tags) of T's
// fields the Lambda answers (a json tag other than "-"), so that a projection
// of the selection reads what it selects (TestEachFieldIsItsAttribute).
func schemaAttributes[T any]() []string { return tagNames[T]("json") }

// tagNames are the names T's fields take in tag (those without one, or
// named "-", left out).
func tagNames[T any](tag string) []string {
	var names []string
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
}

// attributes are the attributes read of an item by a projection; nil when
// every attribute was read.
type attributes []string

// partial is an entity that may be read with a projection.
type partial interface{ setRead(attrs []string) }

// readOnly records on v, when it is a partial entity, that only attrs were
// read (nil: everything).
func readOnly[T any](v *T, attrs []string) {
	if p, ok := any(v).(partial); ok && attrs != nil {
		p.setRead(attrs)
	}
}

// object appends a JSON object's members to dst, leaving out those whose
// attribute was not read (none when read is nil).
type object struct {
	dst   []byte
	read  attributes
	empty bool
}

// object starts an object on dst whose members are the attributes read.
func (a attributes) object(dst []byte) object { return object{append(dst, '{'), a, true} }

// member appends the member's key, and reports whether it was read.
func (o *object) member(name string) bool {
	if o.read != nil && !slices.Contains(o.read, name) {
		return false
	}
	if !o.empty {
		o.dst = append(o.dst, ',')
	}
	o.empty = false
	o.dst = append(append(append(o.dst, '"'), name...), '"', ':')
	return true
}

func (o *object) string(name, v string) {
	if o.member(name) {
		o.dst = payload.AppendString(o.dst, v)
	}
}

func (o *object) int(name string, v int) {
	if o.member(name) {
		o.dst = payload.AppendInt(o.dst, v)
	}
}

// strings writes a list of strings (nil as [], as a list field the schema
// declares non-null needs).
func (o *object) strings(name string, v []string) {
	if o.member(name) {
		o.dst = append(o.dst, '[')
		for i, s := range v {
			if i > 0 {
				o.dst = append(o.dst, ',')
			}
			o.dst = payload.AppendString(o.dst, s)
		}
		o.dst = append(o.dst, ']')
	}
}

func (o *object) end() []byte { return append(o.dst, '}') }
