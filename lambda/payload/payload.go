// Package payload knows how large a Lambda payload may be (6 MB both ways,
// synchronously) and how the function encodes JSON: without HTML escaping,
// byte for byte as Marshal (the Append functions are fuzzed against it), so
// budgets computed from sizes hold for the bytes sent.
package payload

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/example/appsync-dynamo/lambda/internal/jsonstr" // speed-up: jsonstr
)

// MaxBytes is Lambda's limit on a synchronous invocation's request and on its
// response: 6 MB, in bytes (6 x 1024 x 1024). A batch counts as one payload.
const MaxBytes = 6 << 20

// EventReserve is what one event of a batch may take besides its source:
// a lean event from appsyncjs/child.js is about 200 bytes and never 8 kB, a
// direct resolver's 1.5-3 kB (docs/limits.md#limits-and-byte-budgets).
const EventReserve = 8 << 10

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// Marshal encodes v as JSON without HTML escaping: "<", ">" and "&" stay one
// byte each (encoding/json's default turns each into six). The result has no
// trailing newline.
func Marshal(v any) ([]byte, error) {
	buf := buffers.Get().(*bytes.Buffer)
	defer buffers.Put(buf)
	buf.Reset()
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
	return append([]byte(nil), out...), nil
}

// Size returns the length of Marshal(v), or MaxBytes+1 when v cannot be
// encoded (so that a budget check refuses it).
func Size(v any) int {
	b, err := Marshal(v)
	if err != nil {
		return MaxBytes + 1
	}
	return len(b)
}

// The encoders of the hot path (a batch's answers) append JSON by hand,
// with the bytes Marshal would write: reflection costs several times as much.

// AppendString appends s as a JSON string, exactly as Marshal encodes a
// string.
func AppendString(dst []byte, s string) []byte { return appendString(dst, s) }

// appendString is AppendString: Marshal's, or a speed-up that matches it.
var appendString = func(dst []byte, s string) []byte {
	b, _ := Marshal(s)
	return append(dst, b...)
}

func init() {
	appendString = jsonstr.Append // speed-up: jsonstr
}

// AppendStringPtr appends *s as AppendString does, or null for nil.
func AppendStringPtr(dst []byte, s *string) []byte {
	if s == nil {
		return append(dst, "null"...)
	}
	return AppendString(dst, *s)
}

// AppendInt appends n.
func AppendInt(dst []byte, n int) []byte { return strconv.AppendInt(dst, int64(n), 10) }

// Walking JSON known to be valid: an event's source (encoding/json, or the
// decoder that takes its place, validated the payload) or JSON this program
// encoded. These find members and elements without validating again; on
// invalid input their results are unspecified.

// Members returns the raw values of the members of the JSON object raw that
// names select (as encoding/json matches keys to fields; a later duplicate
// wins), nil for a name with no member.
func Members(raw []byte, names ...string) [][]byte {
	values := make([][]byte, len(names))
	Walk(raw, 0, func(key []byte, i int) int {
		end, _ := Skip(raw, i)
		if name := FieldOf(key, names...); name != "" {
			values[slices.Index(names, name)] = raw[i:end]
		}
		return end
	})
	return values
}

// Walk calls member with the key (quoted, as written) and the index of the
// value of each member of the object at raw[i], in order; member returns the
// index after the value: Skip's, or that of a Walk into it. Walk returns the
// index after the object; a value that is not an object is skipped.
func Walk(raw []byte, i int, member func(quotedKey []byte, value int) int) int {
	if i = skipSpace(raw, i); i >= len(raw) || raw[i] != '{' {
		end, _ := Skip(raw, i)
		return end
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		keyEnd := skipString(raw, i)
		key := raw[i:keyEnd]
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return len(raw)
		}
		i = skipSpace(raw, member(key, skipSpace(raw, i+1)))
		if i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
	return min(i+1, len(raw)) // after the closing brace
}

// EachElement calls fn with the raw value of each element of the JSON array
// raw, in order.
func EachElement(raw []byte, fn func(value []byte)) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end, _ := Skip(raw, i)
		fn(raw[i:end])
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
}

// Skip returns the index after the JSON value at b[i] and, when it is an
// array, the number of its elements.
func Skip(b []byte, i int) (end, elements int) {
	if i >= len(b) {
		return len(b), 0
	}
	switch b[i] {
	case '"':
		return skipString(b, i), 0
	case '{', '[':
		array := b[i] == '['
		if array && skipSpace(b, i+1) < len(b) && b[skipSpace(b, i+1)] != ']' {
			elements = 1
		}
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1, elements
				}
			case ',':
				if array && depth == 1 {
					elements++
				}
			}
			i++
		}
		return len(b), elements
	}
	for i < len(b) && !isDelimiter(b[i]) { // a number or a literal
		i++
	}
	return i, 0
}

func isDelimiter(c byte) bool {
	return c == ',' || c == '}' || c == ']' || c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

// skipString returns the index after the string at b[i], found by searching
// for its closing quote, which the runtime does many bytes at a time.
func skipString(b []byte, i int) int {
	for i++; ; {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return len(b)
		}
		q := i + j
		backslashes := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			backslashes++
		}
		if backslashes%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// FieldOf returns which of names the quoted key selects, as encoding/json
// matches an object's keys to a struct's fields (exactly, or else ignoring
// case), "" when none does: names are all the fields of the struct.
func FieldOf(quotedKey []byte, names ...string) string {
	raw := quotedKey[1 : len(quotedKey)-1]
	for _, n := range names {
		if string(raw) == n {
			return n
		}
	}
	// The names are ASCII: a key of plain ASCII matches one only with the
	// same length; only escapes or other characters (which Unicode may fold
	// to ASCII: "\u212a" is a K) need decoding first.
	key := string(raw)
	if bytes.ContainsFunc(raw, func(r rune) bool { return r == '\\' || r >= utf8.RuneSelf }) {
		var err error
		if key, err = Unquote(quotedKey); err != nil {
			return ""
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return n
		}
	}
	return ""
}

// Unquote decodes the JSON string s as encoding/json does; strings without
// escapes take no detour through it.
func Unquote(s []byte) (string, error) {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' && bytes.IndexByte(s, '\\') < 0 && utf8.Valid(s) {
		return string(s[1 : len(s)-1]), nil
	}
	var str string
	err := json.Unmarshal(s, &str)
	return str, err
}
