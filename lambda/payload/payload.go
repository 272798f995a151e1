// Package payload knows how large a Lambda payload may be and how the
// function encodes JSON: without HTML escaping, as Marshal and the Append
// functions write it.
//
// AppSync invokes the function synchronously, and Lambda refuses a
// synchronous request or response over 6 MB: the field then fails. Size
// measures a value as Marshal encodes it; the resolver writes most replies
// itself, with AppendString and the AppendJSON methods of the store's items,
// which encode byte for byte as Marshal does (fuzzed against encoding/json),
// so that byte budgets computed from sizes hold for the bytes that are sent.
package payload

import (
	"bytes"
	"encoding/json"
	"sync"
)

// MaxBytes is Lambda's limit on a synchronous invocation's request and on its
// response: 6 MB, in bytes (6 x 1024 x 1024). A batch counts as one payload.
const MaxBytes = 6 << 20

// EventReserve is what one event of a batch may take besides its source.
// Batched fields have the JavaScript resolver (appsyncjs/child.js), whose
// events carry the arguments, the caller's sub, the field's names, its
// selection text and, only when that text names a $variable, the variables:
// about 200 bytes for the seed's query. The resolver sends no selection
// longer than its MAX_SELECTION (1,000 UTF-16 code units with the variables,
// at most 6 kB escaped), so that 8 kB holds whatever the query; a direct
// resolver's event (25 request headers and the identity's claims, 1.5-3 kB)
// fits too. Budgets for sources leave this much per event of a batch.
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
