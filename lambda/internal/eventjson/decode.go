package eventjson

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// A batch repeats every request header, the identity and the info of the
// query in each of its events, and most of it is never read. Decoding it all
// with encoding/json costs ~25 µs an event; this file walks each event's
// members instead, keeping raw slices of the members a resolver may read
// (arguments, source, ...) and skipping the rest at scanning speed; only small
// arrays go through encoding/json.
//
// It accepts and decodes exactly what encoding/json would for an Event (or a
// []Event): skipped values are fully validated (string escapes and control
// characters, number grammar, literals, nesting up to encoding/json's depth
// limit), keys match field names case-insensitively when no exact match
// exists, null leaves a string or struct member as it was, and a later
// duplicate member wins. FuzzDecode compares the two on arbitrary input.

var errSyntax = errors.New("invalid JSON")

// decodeBatch decodes a JSON array of events.
func decodeBatch(b []byte) ([]appsync.Event, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errSyntax
	}
	var events []appsync.Event
	var m memo
	end, err := container(b, i, func(_ []byte, i int) (int, error) {
		events = append(events, appsync.Event{})
		return decodeEvent(b, i, 1, &events[len(events)-1], &m)
	})
	if err != nil {
		return nil, err
	}
	return events, trailing(b, end)
}

func isNull(b []byte, i int) bool { return len(b)-i >= 4 && string(b[i:i+4]) == "null" }

// stringAt decodes the string member at b[i], inside depth containers;
// null leaves it as it was.
func stringAt(b []byte, i, depth int, dst *string) (int, error) {
	end, err := skipNested(b, i, depth)
	if err != nil || isNull(b, i) {
		return end, err
	}
	*dst, err = payload.Unquote(b[i:end])
	return end, err
}

// rawAt keeps the member at b[i], inside depth containers, as it is, null
// included (as encoding/json does for a json.RawMessage).
func rawAt(b []byte, i, depth int, dst *json.RawMessage) (int, error) {
	end, err := skipNested(b, i, depth)
	if err == nil {
		*dst = b[i:end]
	}
	return end, err
}

// stringsAt decodes the array of strings at b[i] as encoding/json decodes a
// []string: null gives nil, a null element "", and any other element is an
// error.
func stringsAt(b []byte, i int, dst *[]string) (int, error) {
	if isNull(b, i) {
		*dst = nil
		return i + 4, nil
	}
	if i >= len(b) || b[i] != '[' {
		return 0, errSyntax
	}
	out := []string{}
	end, err := container(b, i, func(_ []byte, i int) (int, error) {
		if isNull(b, i) {
			out = append(out, "")
			return i + 4, nil
		}
		if i >= len(b) || b[i] != '"' {
			return 0, errors.New("a list of strings holds another value")
		}
		end, err := skipString(b, i)
		if err != nil {
			return 0, err
		}
		s, err := payload.Unquote(b[i:end])
		out = append(out, s)
		return end, err
	})
	if err == nil {
		*dst = out
	}
	return end, err
}

// unmarshalAt decodes the (small) member at b[i], inside depth containers,
// with encoding/json.
func unmarshalAt(b []byte, i, depth int, dst any) (int, error) {
	end, err := skipNested(b, i, depth)
	if err != nil {
		return 0, err
	}
	return end, json.Unmarshal(b[i:end], dst)
}

var (
	eventFields    = []string{"arguments", "identity", "source", "request", "prev", "stash", "info"}
	infoFields     = []string{"fieldName", "parentTypeName", "selectionSetList", "selectionSetGraphQL", "variables"}
	identityFields = []string{"sub", "issuer", "username", "claims", "sourceIp", "defaultAuthStrategy", "groups",
		"accountId", "userArn", "cognitoIdentityId", "resolverContext"}
)

// memo remembers, within one batch, the last value of each member that
// AppSync repeats in every event (the request headers, the identity, the
// info, ...), as bytes already validated and, for the identity and the
// info, as decoded from those bytes into an empty struct. A value byte for
// byte equal to the remembered one needs one comparison instead of a scan:
// an object is self-delimiting, so the equal bytes are a whole object, the
// same valid one, ending where the scan would have ended.
type memo struct {
	request, prev, stash, arguments []byte
	identity                        []byte
	shared                          *appsync.Identity // decoded from identity; never changed once shared
	info                            []byte
	infoVal                         appsync.Info
}

// recall reports whether the value at b[i] is an object equal to last, and
// the index after it.
func recall(b []byte, i int, last []byte) (int, bool) {
	n := len(last)
	if n == 0 || i >= len(b) || b[i] != '{' || len(b)-i < n || !bytes.Equal(b[i:i+n], last) {
		return 0, false
	}
	return i + n, true
}

// rawRecalled is rawAt, remembering the value in *last.
func rawRecalled(b []byte, i, depth int, dst *json.RawMessage, last *[]byte) (int, error) {
	if m := *last; m != nil {
		if end, ok := recall(b, i, m); ok {
			*dst = b[i:end]
			return end, nil
		}
	}
	end, err := rawAt(b, i, depth, dst)
	if err == nil && i < len(b) && b[i] == '{' {
		*last = b[i:end]
	}
	return end, err
}

// decodeEvent fills ev from the JSON object at b[i], inside depth containers
// (0 for a single event, 1 in a batch: encoding/json's depth limit counts
// them), with null leaving ev zero, as in encoding/json, and returns the
// index after it. m, when not nil, holds what the batch's earlier events
// repeat.
func decodeEvent(b []byte, i, depth int, ev *appsync.Event, m *memo) (int, error) {
	depth++ // the event's members are inside it
	if isNull(b, i) {
		return i + 4, nil
	}
	if m == nil {
		m = &memo{}
	}
	infoSeen := false // a first info decodes into an empty Info; a duplicate merges
	return object(b, i, func(key []byte, i int) (int, error) {
		switch payload.FieldOf(key, eventFields...) {
		case "arguments":
			return rawRecalled(b, i, depth, &ev.Arguments, &m.arguments)
		case "source":
			return rawAt(b, i, depth, &ev.Source)
		case "request":
			return rawRecalled(b, i, depth, &ev.Request, &m.request)
		case "prev":
			return rawRecalled(b, i, depth, &ev.Prev, &m.prev)
		case "stash":
			return rawRecalled(b, i, depth, &ev.Stash, &m.stash)
		case "identity":
			if isNull(b, i) {
				ev.Identity = nil
				return i + 4, nil
			}
			fresh := ev.Identity == nil
			if fresh {
				if end, ok := recall(b, i, m.identity); ok {
					ev.Identity = m.shared // the events of a batch share one, read only
					return end, nil
				}
				ev.Identity = &appsync.Identity{}
			} else if ev.Identity == m.shared {
				// A duplicate member merges into the event's identity: its own copy.
				id := *m.shared
				id.ResolverContext = maps.Clone(id.ResolverContext)
				ev.Identity = &id
			}
			end, err := decodeIdentity(b, i, depth, ev.Identity)
			if err == nil && fresh {
				shared := *ev.Identity
				shared.ResolverContext = maps.Clone(ev.Identity.ResolverContext)
				m.identity, m.shared = b[i:end], &shared
			}
			return end, err
		case "info":
			if isNull(b, i) {
				return i + 4, nil
			}
			fresh := !infoSeen
			infoSeen = true
			if fresh {
				if end, ok := recall(b, i, m.info); ok {
					ev.Info = m.infoVal
					return end, nil
				}
			}
			end, err := decodeInfo(b, i, depth, &ev.Info)
			if err == nil && fresh {
				m.info, m.infoVal = b[i:end], ev.Info
			}
			return end, err
		}
		return skipNested(b, i, depth)
	})
}

// decodeInfo fills info from the object at b[i], inside depth containers.
func decodeInfo(b []byte, i, depth int, info *appsync.Info) (int, error) {
	depth++
	return object(b, i, func(key []byte, i int) (int, error) {
		switch payload.FieldOf(key, infoFields...) {
		case "fieldName":
			return stringAt(b, i, depth, &info.FieldName)
		case "parentTypeName":
			return stringAt(b, i, depth, &info.ParentTypeName)
		case "selectionSetGraphQL":
			return stringAt(b, i, depth, &info.SelectionSetGraphQL)
		case "selectionSetList":
			return rawAt(b, i, depth, &info.SelectionSetList)
		case "variables":
			return rawAt(b, i, depth, &info.Variables)
		}
		return skipNested(b, i, depth)
	})
}

// decodeIdentity fills id from the object at b[i], inside depth containers.
func decodeIdentity(b []byte, i, depth int, id *appsync.Identity) (int, error) {
	depth++
	return object(b, i, func(key []byte, i int) (int, error) {
		switch payload.FieldOf(key, identityFields...) {
		case "sub":
			return stringAt(b, i, depth, &id.Sub)
		case "issuer":
			return stringAt(b, i, depth, &id.Issuer)
		case "username":
			return stringAt(b, i, depth, &id.Username)
		case "defaultAuthStrategy":
			return stringAt(b, i, depth, &id.DefaultAuthStrategy)
		case "accountId":
			return stringAt(b, i, depth, &id.AccountID)
		case "userArn":
			return stringAt(b, i, depth, &id.UserArn)
		case "cognitoIdentityId":
			return stringAt(b, i, depth, &id.CognitoIdentityID)
		case "claims":
			return rawAt(b, i, depth, &id.Claims)
		case "sourceIp":
			return stringsAt(b, i, &id.SourceIP)
		case "groups":
			return stringsAt(b, i, &id.Groups)
		case "resolverContext":
			return unmarshalAt(b, i, depth, &id.ResolverContext)
		}
		return skipNested(b, i, depth)
	})
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

// Decode is appsync.Decode, decoded by walking the payload rather than by
// encoding/json: it accepts and decodes exactly what appsync.Decode does
// (FuzzDecode), the events' raw members (Arguments, Source, ...) slices of
// payload, which must not change while they are in use.
func Decode(payload []byte) (events []appsync.Event, batch bool, err error) {
	trimmed := bytes.TrimLeft(payload, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, appsync.ErrMalformed
	}
	if trimmed[0] == '[' {
		events, err := decodeBatch(trimmed)
		if err != nil {
			return nil, true, errors.Join(appsync.ErrMalformed, err)
		}
		return events, true, nil
	}
	events = make([]appsync.Event, 1)
	end, err := decodeEvent(trimmed, 0, 0, &events[0], nil)
	if err == nil {
		err = trailing(trimmed, end)
	}
	if err != nil {
		return nil, false, errors.Join(appsync.ErrMalformed, err)
	}
	return events, false, nil
}

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
