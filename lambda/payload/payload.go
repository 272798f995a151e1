// Package payload knows how large a Lambda payload may be (6 MB both ways,
// synchronously) and how the function encodes JSON: without HTML escaping,
// byte for byte as Marshal (the Append functions are fuzzed against it), so
// budgets computed from sizes hold for the bytes sent.
package payload

import (
	"bytes"
	"encoding/json"
	"sync"
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
