package realtime

import (
	"bytes"
	"encoding/json"
	"fmt"
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
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	out := bytes.TrimSuffix(b.Bytes(), []byte("\n"))
	if r.Escaped() {
		out = escapeNonASCII(out)
	}
	return out, nil
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
