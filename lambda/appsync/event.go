// Package appsync holds what AppSync sends a direct Lambda resolver: the
// event (one, or a batch), the caller's identity, the reply for a batch and
// the selection the event carries (selection.go). Fields no resolver reads,
// such as the request headers, stay raw JSON.
package appsync

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Event is one direct Lambda resolver invocation for one field of one parent.
type Event struct {
	// Arguments are the field's GraphQL arguments, variables already resolved.
	Arguments json.RawMessage `json:"arguments"`
	// Identity is the caller, nil for API-key requests. The events of a
	// batch may share one Identity: it is read, never changed.
	Identity *Identity `json:"identity"`
	// Source is the parent's whole resolved object (null on root fields),
	// including keys the schema does not declare.
	Source json.RawMessage `json:"source"`
	// Request carries the HTTP request's headers and domain name, undecoded.
	Request json.RawMessage `json:"request,omitempty"`
	Prev    json.RawMessage `json:"prev,omitempty"`
	Stash   json.RawMessage `json:"stash,omitempty"`
	Info    Info            `json:"info"`
}

// Info describes the field being resolved.
type Info struct {
	FieldName      string `json:"fieldName"`
	ParentTypeName string `json:"parentTypeName"`
	// SelectionSetList lists the selected sub-fields as slash-joined paths
	// ("comments/author/name"), aliases for names, fragments expanded: a JSON
	// array kept undecoded. The resolvers read SelectionSetGraphQL instead.
	SelectionSetList json.RawMessage `json:"selectionSetList"`
	// SelectionSetGraphQL is the sub-selection as GraphQL text, with aliases
	// and arguments, and named fragment spreads left unexpanded.
	SelectionSetGraphQL string          `json:"selectionSetGraphQL"`
	Variables           json.RawMessage `json:"variables,omitempty"`
}

// Field returns "ParentType.field", the key resolvers are routed on.
func (i *Info) Field() string { return i.ParentTypeName + "." + i.FieldName }

// ErrMalformed is returned by Decode for a payload that is neither an event
// nor an array of events.
var ErrMalformed = errors.New("malformed AppSync event")

// Decode parses a Lambda payload with encoding/json: one event, or a JSON
// array of them (batch). A payload that is neither is ErrMalformed. It is the
// reference lambda/internal/eventjson.Decode is fuzzed against.
func Decode(payload []byte) (events []Event, batch bool, err error) {
	trimmed := bytes.TrimLeft(payload, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, ErrMalformed
	}
	if trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &events); err != nil {
			return nil, true, errors.Join(ErrMalformed, err)
		}
		return events, true, nil
	}
	events = make([]Event, 1)
	if err := json.Unmarshal(trimmed, &events[0]); err != nil {
		return nil, false, errors.Join(ErrMalformed, err)
	}
	return events, false, nil
}

// BatchItem is one element of the reply to a batch: AppSync turns an item
// with an ErrorMessage into a GraphQL error for that element only.
type BatchItem struct {
	Data         any    `json:"data"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	ErrorType    string `json:"errorType,omitempty"`
}
