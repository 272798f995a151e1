// Package appsync holds what AppSync sends a direct Lambda resolver: the
// event (one, or a batch of them), the caller's identity, the reply for a
// batch, and the selection the event carries (selection.go: what the query
// selects under the field, under either reading of a merged field). The
// event's types use only the standard library; the selection is parsed with
// gqlparser.
//
// aws-lambda-go has no type for direct-resolver events (its
// AppSyncResolverTemplate is for the old VTL invoke), so this package defines
// one. Fields the resolvers never read, such as the request headers, are kept
// as raw JSON: decoding them would cost time on every event of a batch.
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
	// ("comments", "comments/author/name"), aliases in place of field names,
	// named fragments expanded, no arguments: a JSON array of strings, kept
	// undecoded. The resolvers read SelectionSetGraphQL instead, which has
	// field names under their aliases, and arguments.
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

// Decode parses a Lambda payload with encoding/json. AppSync sends a single
// event for a field without batching and a JSON array of events when it
// batches; batch reports which it was, so the reply can take the same
// shape. A payload that is neither is ErrMalformed.
//
// It is the reference: the function decodes with
// lambda/internal/eventjson.Decode, which decodes exactly as this does
// (its fuzz test holds it to it) at a fraction of the cost.
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
