package probe

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
)

// The probe's part of the resolver function: a root field's resolver
// answers a probe with what AppSync told it (appsyncjs/child.js answers it
// for the fields of objects), and the function reads the deployment's
// verdict.

// Feature makes the resolver answer the probes of root fields.
func Feature() resolver.Feature { return resolver.Feature{Answer: answer, AnswerHeader: Header} }

// answer returns the probe's error when ev's request asks for one of its
// field, and nil otherwise.
func answer(ev *appsync.Event) error {
	var req struct {
		Headers map[string]any `json:"headers"`
	}
	if json.Unmarshal(ev.Request, &req) != nil {
		return nil
	}
	asked := ""
	for name, v := range req.Headers {
		if s, ok := v.(string); ok && strings.EqualFold(name, Header) {
			asked = s
		}
	}
	if asked != ev.Info.Field() {
		return nil
	}
	seen := Selection{SelectionSetGraphQL: ev.Info.SelectionSetGraphQL, SelectionSetList: []string{}}
	if len(ev.Info.SelectionSetList) > 0 {
		_ = json.Unmarshal(ev.Info.SelectionSetList, &seen.SelectionSetList)
	}
	msg, _ := payload.Marshal(seen)
	return messages.InvokeResponse_Error{Type: ErrorType, Message: string(msg)}
}

// FromParameter returns the reading the deployment's probe wrote into the
// parameter SELECTION_READING_PARAMETER names, read in the background
// (Handoff); nil where SELECTION_READING pins a reading or no parameter is
// named. Each environment logs the verdicts it reads ("selection reading").
func FromParameter(cfg aws.Config, getenv func(string) string, log *slog.Logger) func() appsync.Reading {
	parameter := getenv("SELECTION_READING_PARAMETER")
	if getenv("SELECTION_READING") != "" || parameter == "" {
		return nil
	}
	endpoint := SSM(awsenv.Endpoint(getenv, "SSM"))
	read := func(ctx context.Context) (string, error) {
		var out struct{ Parameter struct{ Value string } }
		err := awsenv.Call(ctx, cfg.HTTPClient, cfg, endpoint, "GetParameter", map[string]string{"Name": parameter}, &out)
		return out.Parameter.Value, err
	}
	failed := func(err error) {
		log.Warn("the selection probe's verdict is not read: reading as first-occurrence", "parameter", parameter, "error", err)
	}
	told := func(r appsync.Reading) { log.Info("selection reading", "reading", r.String(), "source", "probed") }
	return NewHandoff(read, failed, told).Reading
}

// SSM is Systems Manager, where the verdict is kept, at endpoint ("" for the
// region's).
func SSM(endpoint string) awsenv.Service {
	return awsenv.Service{Name: "ssm", TargetPrefix: "AmazonSSM", Endpoint: endpoint}
}
