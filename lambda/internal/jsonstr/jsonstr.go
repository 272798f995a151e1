// Package jsonstr is a speed-up: a string appended as JSON by hand, runs
// of plain ASCII eight bytes at a time, in place of encoding/json's encoder
// (payload.Marshal). Its fuzz test holds it to payload.Marshal. lambda/payload
// installs it by the lines marked "speed-up: jsonstr"; deleting them turns
// it off.
package jsonstr

import "unicode/utf8"

const hex = "0123456789abcdef"

// Append appends s as a JSON string, exactly as payload.Marshal encodes a
// string: no HTML escaping; control characters, quote and backslash escaped;
// U+2028 and U+2029 escaped; invalid UTF-8 replaced by U+FFFD.
func Append(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		// Runs of plain ASCII (no quote, backslash or control character)
		// are copied as they are: skip them eight bytes at a time.
		for len(s)-i >= 8 && plainASCII(s[i:i+8]) {
			i += 8
		}
		if i >= len(s) {
			break
		}
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[b>>4], hex[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainASCII reports whether the eight bytes of w are ASCII that a JSON
// string holds as it is: the zero-byte test on w^'"', w^'\\' and w-0x20,
// with the high bits of w (non-ASCII) added.
func plainASCII(w string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	return ((quote-ones)&^quote|(backslash-ones)&^backslash|(x-ones*0x20)&^x|x)&highs == 0
}
