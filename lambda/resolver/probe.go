package resolver

// The selection probe (lambda/probe): what AppSync told a root field's
// resolver of its selection, shown to the client that asks, so that the
// deployment and make smoke can tell how AppSync writes a merged field's
// selection (appsync.Reading). appsyncjs/child.js answers the same probe
// for the fields of objects.

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/probe"
)

// probed returns the probe's error when ev's request asks for one of its
// field.
func probed(ev *appsync.Event) (messages.InvokeResponse_Error, bool) {
	if !bytes.Contains(bytes.ToLower(ev.Request), []byte(probe.Header)) {
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
		if s, ok := v.(string); ok && strings.EqualFold(name, probe.Header) {
			asked = s
		}
	}
	if asked != ev.Info.Field() {
		return messages.InvokeResponse_Error{}, false
	}
	seen := probe.Selection{SelectionSetGraphQL: ev.Info.SelectionSetGraphQL, SelectionSetList: []string{}}
	if len(ev.Info.SelectionSetList) > 0 {
		_ = json.Unmarshal(ev.Info.SelectionSetList, &seen.SelectionSetList)
	}
	msg, _ := payload.Marshal(seen)
	return messages.InvokeResponse_Error{Type: probe.ErrorType, Message: string(msg)}, true
}
