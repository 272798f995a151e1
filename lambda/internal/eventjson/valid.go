package eventjson

import (
	"bytes"
	"slices"
)

// Walking JSON known to be valid: a slice of a payload Decode accepted (an
// event's source) or JSON this program encoded. These find members and
// elements without validating again; on invalid input their results are
// unspecified.

// MembersOfValid returns the raw values of the members of the JSON object
// raw that names select (as encoding/json matches keys to fields; a later
// duplicate wins), nil for a name with no member, for raw known to be valid
// JSON: a slice of a payload Decode accepted (an event's source), or JSON
// this program encoded. It finds the members without validating again: strings are
// skipped by searching for their closing quote, which the runtime does many
// bytes at a time. On invalid input its result is unspecified.
func MembersOfValid(raw []byte, names ...string) [][]byte {
	values := make([][]byte, len(names))
	WalkOfValid(raw, 0, func(key []byte, i int) int {
		end, _ := SkipValid(raw, i)
		if name := field(key, names...); name != "" {
			values[slices.Index(names, name)] = raw[i:end]
		}
		return end
	})
	return values
}

// WalkOfValid calls member with the key (quoted, as written) and the index
// of the value of each member of the object at raw[i], in order, for raw
// known to be valid JSON (see MembersOfValid); member returns the index
// after the value: SkipValid's, or that of a WalkOfValid into it, so that a
// caller reads nested members in the same pass. WalkOfValid returns the
// index after the object; a value that is not an object is skipped, with no
// call.
func WalkOfValid(raw []byte, i int, member func(quotedKey []byte, value int) int) int {
	if i = skipSpace(raw, i); i >= len(raw) || raw[i] != '{' {
		end, _ := SkipValid(raw, i)
		return end
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] == '"'; {
		keyEnd := skipValidString(raw, i)
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

// FieldOf returns which of names the quoted key selects, as encoding/json
// matches an object's keys to a struct's fields (exactly, or else ignoring
// case), "" when none does: names are all the fields of the struct.
func FieldOf(quotedKey []byte, names ...string) string { return field(quotedKey, names...) }

// skipValidString returns the index after the valid string at b[i].
func skipValidString(b []byte, i int) int {
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

// SkipValid returns the index after the valid JSON value at b[i] (see
// MembersOfValid) and, when it is an array, the number of its elements.
func SkipValid(b []byte, i int) (end, elements int) {
	if i >= len(b) {
		return len(b), 0
	}
	switch b[i] {
	case '"':
		return skipValidString(b, i), 0
	case '{', '[':
		array := b[i] == '['
		if array && skipSpace(b, i+1) < len(b) && b[skipSpace(b, i+1)] != ']' {
			elements = 1
		}
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipValidString(b, i)
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

// Unquote decodes the JSON string s as encoding/json does.
func Unquote(s []byte) (string, error) { return unquote(s) }

// EachElementOfValid calls fn with the raw value of each element of the JSON
// array raw, in order, for raw known to be valid (see MembersOfValid).
func EachElementOfValid(raw []byte, fn func(value []byte)) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return
	}
	for i = skipSpace(raw, i+1); i < len(raw) && raw[i] != ']'; {
		end, _ := SkipValid(raw, i)
		fn(raw[i:end])
		if i = skipSpace(raw, end); i < len(raw) && raw[i] == ',' {
			i = skipSpace(raw, i+1)
		}
	}
}
