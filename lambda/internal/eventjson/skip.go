package eventjson

import (
	"encoding/binary"
)

// The validating scanner: it skips any JSON value, checking it as
// encoding/json would (string escapes and control characters, number
// grammar, literals, nesting up to encoding/json's depth limit), without
// decoding it. Decode reads events with it; the walkers of valid JSON
// (valid.go) trust what it has checked.

// object walks the JSON object at b[i], calling member with each key and the
// index of its value; member consumes the value and returns the index after
// it. object returns the index after the object.
func object(b []byte, i int, member func(key []byte, i int) (int, error)) (int, error) {
	if i >= len(b) || b[i] != '{' {
		return 0, errSyntax
	}
	return container(b, i, member)
}

// container walks the array or object at b[i] as object does; for an array,
// key is nil.
func container(b []byte, i int, member func(key []byte, i int) (int, error)) (int, error) {
	closing := byte(']')
	if b[i] == '{' {
		closing = '}'
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == closing {
		return i + 1, nil
	}
	for {
		var key []byte
		if closing == '}' {
			if i >= len(b) || b[i] != '"' {
				return 0, errSyntax
			}
			keyEnd, err := skipString(b, i)
			if err != nil {
				return 0, err
			}
			key = b[i:keyEnd]
			if i = skipSpace(b, keyEnd); i >= len(b) || b[i] != ':' {
				return 0, errSyntax
			}
			i = skipSpace(b, i+1)
		}
		end, err := member(key, i)
		if err != nil {
			return 0, err
		}
		if i = skipSpace(b, end); i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case closing:
			return i + 1, nil
		default:
			return 0, errSyntax
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// maxDepth is encoding/json's limit on nested arrays and objects.
const maxDepth = 10000

// special marks the bytes a string scan must stop at: the closing quote, a
// backslash, and control characters, which JSON forbids in strings.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// skipString returns the index after the string starting at b[i] == '"',
// checking its escapes and refusing raw control characters. Runs of ordinary
// characters are skipped eight bytes at a time.
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		for i+16 <= len(b) && specialBits(binary.LittleEndian.Uint64(b[i:]))|specialBits(binary.LittleEndian.Uint64(b[i+8:])) == 0 {
			i += 16
		}
		for i+8 <= len(b) && !hasSpecial(binary.LittleEndian.Uint64(b[i:])) {
			i += 8
		}
		for i < len(b) && !special[b[i]] {
			i++
		}
		if i >= len(b) {
			return 0, errSyntax
		}
		switch b[i] {
		case '"':
			return i + 1, nil
		case '\\':
			if i+1 >= len(b) {
				return 0, errSyntax
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(b) || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
					return 0, errSyntax
				}
				i += 6
			default:
				return 0, errSyntax
			}
		default:
			return 0, errSyntax // a raw control character
		}
	}
}

// hasSpecial reports whether one of the eight bytes of x may be a quote, a
// backslash or a control character (it may say so of an ordinary byte, never
// the reverse): the classic test for a zero byte, applied to x^'"', x^'\\'
// and x-0x20.
func hasSpecial(x uint64) bool { return specialBits(x) != 0 }

// specialBits is hasSpecial's test, as the high bits of the bytes that may
// be special: two words are tested at once by or-ing theirs.
func specialBits(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote := x ^ (ones * '"')
	backslash := x ^ (ones * '\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (x-ones*0x20)&^x) & highs
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// skipValue returns the index after the JSON value starting at b[i],
// validating it as encoding/json does.
func skipValue(b []byte, i int) (int, error) {
	return skipNested(b, i, 0)
}

func skipNested(b []byte, i, depth int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch c := b[i]; {
	case c == '"':
		return skipString(b, i)
	case c == '{' || c == '[':
		if depth+1 > maxDepth {
			return 0, errSyntax
		}
		return container(b, i, func(_ []byte, i int) (int, error) { return skipNested(b, i, depth+1) })
	case c == 't':
		return skipLiteral(b, i, "true")
	case c == 'f':
		return skipLiteral(b, i, "false")
	case c == 'n':
		return skipLiteral(b, i, "null")
	default:
		return skipNumber(b, i)
	}
}

func skipLiteral(b []byte, i int, lit string) (int, error) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, errSyntax
	}
	return i + len(lit), nil
}

// skipNumber returns the index after the number at b[i]:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func skipNumber(b []byte, i int) (int, error) {
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && '1' <= b[i] && b[i] <= '9':
		i = skipDigits(b, i)
	default:
		return 0, errSyntax
	}
	if i < len(b) && b[i] == '.' {
		if i+1 >= len(b) || !isDigit(b[i+1]) {
			return 0, errSyntax
		}
		i = skipDigits(b, i+1)
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, errSyntax
		}
		i = skipDigits(b, i)
	}
	return i, nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func skipDigits(b []byte, i int) int {
	for i < len(b) && isDigit(b[i]) {
		i++
	}
	return i
}

// eachMember calls fn with the key (quoted, as written) and the raw value of
// each member of the JSON object raw, in order, after checking raw as the
// decoder does. fn's slices are raw's.
func eachMember(raw []byte, fn func(quotedKey, value []byte)) error {
	i := skipSpace(raw, 0)
	end, err := object(raw, i, func(key []byte, i int) (int, error) {
		end, err := skipValue(raw, i)
		if err == nil {
			fn(key, raw[i:end])
		}
		return end, err
	})
	if err != nil {
		return err
	}
	return trailing(raw, end)
}

// eachElement calls fn with the raw value of each element of the JSON array
// raw, in order, after checking raw as the decoder does.
func eachElement(raw []byte, fn func(value []byte)) error {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return errSyntax
	}
	end, err := container(raw, i, func(_ []byte, i int) (int, error) {
		end, err := skipValue(raw, i)
		if err == nil {
			fn(raw[i:end])
		}
		return end, err
	})
	if err != nil {
		return err
	}
	return trailing(raw, end)
}
