package realtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// MessageReading is how AppSync measures a subscription message against its
// documented limit of 240 KB, which AWS does not define: the message's JSON
// in UTF-8, or with every character outside ASCII escaped (a 4-byte
// character is \ud83d\ude00, 12 bytes), against 240 × 1,024 or 240,000
// bytes. The local AppSync writes its messages as the reading says and
// drops one past its limit; the tests run under each, and make smoke tells
// which one a deployed API uses (local/smoke).
type MessageReading int

const (
	UTF8Of245760 MessageReading = iota // the zero Hub's
	UTF8Of240000
	EscapedOf245760
	EscapedOf240000
)

// MessageReadings are the four readings, the most generous first.
var MessageReadings = []MessageReading{UTF8Of245760, UTF8Of240000, EscapedOf245760, EscapedOf240000}

// MaxMessage is AppSync's limit on a subscription's message under its most
// generous reading (240 KB of 1,024 bytes).
const MaxMessage = 240 << 10

// Limit is the largest message the reading delivers, in bytes.
func (r MessageReading) Limit() int {
	if r == UTF8Of240000 || r == EscapedOf240000 {
		return 240_000
	}
	return MaxMessage
}

// Escaped reports whether the reading writes characters outside ASCII as
// \u escapes.
func (r MessageReading) Escaped() bool { return r == EscapedOf245760 || r == EscapedOf240000 }

func (r MessageReading) String() string {
	enc := "utf8"
	if r.Escaped() {
		enc = "escaped"
	}
	return enc + "-" + strconv.Itoa(r.Limit())
}

// ParseMessageReading is the reading String names.
func ParseMessageReading(s string) (MessageReading, error) {
	for _, r := range MessageReadings {
		if r.String() == s {
			return r, nil
		}
	}
	return 0, fmt.Errorf("no message reading %q (want %v)", s, MessageReadings)
}

// Encode writes v as JSON as the reading measures it: '<', '>' and '&' as
// themselves and, escaped, every character outside ASCII as the \u escapes
// of its UTF-16 units.
func (r MessageReading) Encode(v any) ([]byte, error) {
	e := encoder{escaped: r.Escaped(), limit: math.MaxInt}
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.buf, nil
}

// dataMessage is the data message of subscription id, its root field's
// alias, data and errs, written as the reading measures it; ok is false
// for one past the reading's limit, given up as soon as it passes it.
func (r MessageReading) dataMessage(id, alias string, data *object, errs []gqlError) (msg []byte, ok bool) {
	payload := &object{}
	payload.set("data", (&object{}).set(alias, data))
	if len(errs) > 0 {
		payload.set("errors", errs)
	}
	if atLeast(data, r.Limit()) > r.Limit() { // past the limit before a byte is written
		return nil, false
	}
	message := (&object{}).set("id", id).set("payload", payload).set("type", "data")
	e := encoder{escaped: r.Escaped(), limit: r.Limit()}
	if e.value(message) != nil || len(e.buf) > r.Limit() {
		return nil, false
	}
	return e.buf, true
}

// atLeast is a lower bound of the bytes v's JSON takes under any reading
// (its strings' and keys' bytes, unescaped and unquoted), counted until it
// passes limit.
func atLeast(v any, limit int) int {
	n := 0
	switch v := v.(type) {
	case *object:
		for i, k := range v.keys {
			if n += len(k) + atLeast(v.values[i], limit-n); n > limit {
				break
			}
		}
	case []any:
		for _, item := range v {
			if n += atLeast(item, limit-n); n > limit {
				break
			}
		}
	case string:
		n = len(v)
	}
	return n
}

// object is a JSON object whose members are written in the order set.
type object struct {
	keys   []string
	values []any
}

// set sets key to v, in place if key is set already, and returns o.
func (o *object) set(key string, v any) *object {
	if i := slices.Index(o.keys, key); i >= 0 {
		o.values[i] = v
		return o
	}
	o.keys, o.values = append(o.keys, key), append(o.values, v)
	return o
}

// add appends key, which o does not hold yet, with v.
func (o *object) add(key string, v any) {
	o.keys, o.values = append(o.keys, key), append(o.values, v)
}

// errTooLarge stops an encoder past its limit.
var errTooLarge = errors.New("the message is past the reading's limit")

// encoder writes JSON as encoding/json does (HTML characters unescaped),
// objects in their order, and stops with errTooLarge once past limit.
type encoder struct {
	buf     []byte
	escaped bool // characters outside ASCII as \u escapes
	limit   int
}

func (e *encoder) value(v any) error {
	if len(e.buf) > e.limit {
		return errTooLarge
	}
	switch v := v.(type) {
	case *object:
		e.buf = append(e.buf, '{')
		for i, k := range v.keys {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			e.leaf(k)
			e.buf = append(e.buf, ':')
			if err := e.value(v.values[i]); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, '}')
	case []any:
		e.buf = append(e.buf, '[')
		for i, item := range v {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(item); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	case map[string]any: // a value the mutation's result holds unselected: its keys in order
		o := &object{}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			o.set(k, v[k])
		}
		return e.value(o)
	default:
		return e.leaf(v)
	}
	return nil
}

// leaf writes v as encoding/json writes it, HTML characters unescaped.
func (e *encoder) leaf(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if e.escaped {
		out = escapeNonASCII(out)
	}
	e.buf = append(e.buf, out...)
	return nil
}

// escapeNonASCII escapes the characters outside ASCII of valid JSON, which
// can only stand inside its strings.
func escapeNonASCII(b []byte) []byte {
	out := make([]byte, 0, len(b)+len(b)/2)
	for len(b) > 0 {
		c, n := utf8.DecodeRune(b)
		b = b[n:]
		if c < utf8.RuneSelf {
			out = append(out, byte(c))
			continue
		}
		for _, u := range utf16.Encode([]rune{c}) {
			out = fmt.Appendf(out, `\u%04x`, u)
		}
	}
	return out
}
