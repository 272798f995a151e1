package appsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// A batch repeats every request header, the identity and the info of the
// query in each of its events, and most of it is never read. Decoding it all
// with encoding/json costs ~25 µs an event; this file walks each event's
// members instead, keeping raw slices of the members a resolver may read
// (arguments, source, ...) and skipping the rest at scanning speed; only small
// arrays go through encoding/json. Skipped values are checked for balanced
// brackets and terminated strings, not fully validated.

var errSyntax = errors.New("invalid JSON")

// decodeBatch decodes a JSON array of events.
func decodeBatch(b []byte) ([]Event, error) {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '[' {
		return nil, errSyntax
	}
	i = skipSpace(b, i+1)
	events := make([]Event, 0, bytes.Count(b, []byte(`"fieldName"`)))
	if i < len(b) && b[i] == ']' {
		return events, trailing(b, i+1)
	}
	for {
		end, err := skipValue(b, i)
		if err != nil {
			return nil, err
		}
		events = append(events, Event{})
		if err := decodeEvent(b[i:end], &events[len(events)-1]); err != nil {
			return nil, err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return nil, errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case ']':
			return events, trailing(b, i+1)
		default:
			return nil, errSyntax
		}
	}
}

// members calls fn with the key and the raw value of each member of the
// JSON object b, in order.
func members(b []byte, fn func(key string, value json.RawMessage) error) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errSyntax
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return trailing(b, i+1)
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return errSyntax
		}
		keyEnd, err := skipString(b, i)
		if err != nil {
			return err
		}
		key, err := unquote(b[i:keyEnd])
		if err != nil {
			return err
		}
		i = skipSpace(b, keyEnd)
		if i >= len(b) || b[i] != ':' {
			return errSyntax
		}
		i = skipSpace(b, i+1)
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		if err := fn(key, b[i:end]); err != nil {
			return err
		}
		i = skipSpace(b, end)
		if i >= len(b) {
			return errSyntax
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return trailing(b, i+1)
		default:
			return errSyntax
		}
	}
}

// unquote decodes a JSON string; strings without escapes take no detour
// through encoding/json.
func unquote(b []byte) (string, error) {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 && utf8.Valid(b) {
		return string(b[1 : len(b)-1]), nil
	}
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// stringValue decodes a string member, null giving "".
func stringValue(dst *string, v json.RawMessage) error {
	if string(v) == "null" {
		*dst = ""
		return nil
	}
	s, err := unquote(v)
	*dst = s
	return err
}

// rawValue keeps a member as it is, null included (as encoding/json does).
func rawValue(dst *json.RawMessage, v json.RawMessage) error {
	*dst = v
	return nil
}

// decodeEvent fills ev from one JSON object.
func decodeEvent(b []byte, ev *Event) error {
	return members(b, func(key string, v json.RawMessage) error {
		switch key {
		case "arguments":
			return rawValue(&ev.Arguments, v)
		case "source":
			return rawValue(&ev.Source, v)
		case "request":
			return rawValue(&ev.Request, v)
		case "prev":
			return rawValue(&ev.Prev, v)
		case "stash":
			return rawValue(&ev.Stash, v)
		case "identity":
			ev.Identity = nil
			if string(v) == "null" {
				return nil
			}
			ev.Identity = &Identity{}
			return decodeIdentity(v, ev.Identity)
		case "info":
			return decodeInfo(v, &ev.Info)
		}
		return nil
	})
}

func decodeInfo(b []byte, info *Info) error {
	return members(b, func(key string, v json.RawMessage) error {
		switch key {
		case "fieldName":
			return stringValue(&info.FieldName, v)
		case "parentTypeName":
			return stringValue(&info.ParentTypeName, v)
		case "selectionSetGraphQL":
			return stringValue(&info.SelectionSetGraphQL, v)
		case "selectionSetList":
			return json.Unmarshal(v, &info.SelectionSetList)
		case "variables":
			return rawValue(&info.Variables, v)
		}
		return nil
	})
}

func decodeIdentity(b []byte, id *Identity) error {
	return members(b, func(key string, v json.RawMessage) error {
		switch key {
		case "sub":
			return stringValue(&id.Sub, v)
		case "issuer":
			return stringValue(&id.Issuer, v)
		case "username":
			return stringValue(&id.Username, v)
		case "defaultAuthStrategy":
			return stringValue(&id.DefaultAuthStrategy, v)
		case "accountId":
			return stringValue(&id.AccountID, v)
		case "userArn":
			return stringValue(&id.UserArn, v)
		case "cognitoIdentityId":
			return stringValue(&id.CognitoIdentityID, v)
		case "claims":
			return rawValue(&id.Claims, v)
		case "sourceIp":
			return json.Unmarshal(v, &id.SourceIP)
		case "groups":
			return json.Unmarshal(v, &id.Groups)
		case "resolverContext":
			return json.Unmarshal(v, &id.ResolverContext)
		}
		return nil
	})
}

func trailing(b []byte, i int) error {
	if skipSpace(b, i) != len(b) {
		return errSyntax
	}
	return nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index after the string starting at b[i] == '"'.
// It jumps from quote to quote; a quote preceded by an odd number of
// backslashes is escaped and does not end the string.
func skipString(b []byte, i int) (int, error) {
	i++
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, errSyntax
		}
		i += j
		k := i - 1
		for k >= 0 && b[k] == '\\' {
			k--
		}
		if (i-1-k)%2 == 0 {
			return i + 1, nil
		}
		i++
	}
}

// skipValue returns the index after the JSON value starting at b[i]. It
// checks that brackets balance and strings end; literals are validated by
// whoever decodes them, or not at all when they are skipped.
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, errSyntax
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		var buf [32]byte
		stack := buf[:0]
		for i < len(b) {
			switch c := b[i]; c {
			case '"':
				end, err := skipString(b, i)
				if err != nil {
					return 0, err
				}
				i = end
				continue
			case '{', '[':
				stack = append(stack, c)
			case '}', ']':
				if len(stack) == 0 || (c == '}') != (stack[len(stack)-1] == '{') {
					return 0, errSyntax
				}
				stack = stack[:len(stack)-1]
				if len(stack) == 0 {
					return i + 1, nil
				}
			}
			i++
		}
		return 0, errSyntax
	default:
		start := i
		for i < len(b) && !isDelimiter(b[i]) {
			i++
		}
		if i == start || !json.Valid(b[start:i]) {
			return 0, errSyntax
		}
		return i, nil
	}
}

func isDelimiter(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\n', '\t', '\r':
		return true
	}
	return false
}
