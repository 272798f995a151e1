package resolver

// The selection probe: what AppSync told a root field's resolver of its
// selection, shown to the client that asks, so that make smoke can tell how
// a deployed AppSync writes a merged field's selection (selection.Reading).
// appsyncjs/child.js answers the same probe for the fields of objects.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// ProbeHeader is the request header that asks the resolver of the field it
// names ("Query.post") to fail with ProbeErrorType, the info's
// selectionSetGraphQL and selectionSetList as its message (ProbedSelection,
// in JSON). It shows the caller nothing but what its own query selects, and
// costs a root field's event without it one scan of its request member.
const (
	ProbeHeader    = "x-selection-probe"
	ProbeErrorType = "SelectionProbe"
)

// ProbedSelection is the message of a probe's error.
type ProbedSelection struct {
	SelectionSetGraphQL string   `json:"selectionSetGraphQL"`
	SelectionSetList    []string `json:"selectionSetList"`
}

// probe returns the probe's error when ev's request asks for one of its
// field.
func probe(ev *appsync.Event) (messages.InvokeResponse_Error, bool) {
	if !bytes.Contains(bytes.ToLower(ev.Request), []byte(ProbeHeader)) {
		return messages.InvokeResponse_Error{}, false
	}
	var req struct {
		Headers map[string]any `json:"headers"`
	}
	if json.Unmarshal(ev.Request, &req) != nil {
		return messages.InvokeResponse_Error{}, false
	}
	asked := ""
	for name, v := range req.Headers {
		if s, ok := v.(string); ok && strings.EqualFold(name, ProbeHeader) {
			asked = s
		}
	}
	if asked != ev.Info.Field() {
		return messages.InvokeResponse_Error{}, false
	}
	seen := ProbedSelection{SelectionSetGraphQL: ev.Info.SelectionSetGraphQL, SelectionSetList: []string{}}
	if len(ev.Info.SelectionSetList) > 0 {
		_ = json.Unmarshal(ev.Info.SelectionSetList, &seen.SelectionSetList)
	}
	msg, _ := payload.Marshal(seen)
	return messages.InvokeResponse_Error{Type: ProbeErrorType, Message: string(msg)}, true
}
