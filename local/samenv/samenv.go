// Package samenv prepares `sam local invoke` of the synthesized template: it
// finds the function and writes the env-vars file that points it at DynamoDB
// Local. SAM passes a variable from that file only when the template's
// function declares it, so the stack declares, empty, the ones only local
// runs set (AWS_ENDPOINT_URL_DYNAMODB, NEXT_TOKEN_KEY).
package samenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Function is the resolver function of a synthesized template.
type Function struct {
	LogicalID    string   // what `sam local invoke` takes
	Declared     []string // the environment variables the template declares
	Architecture string   // "arm64" or "x86_64"
	AssetPath    string   // the directory under cdk.out that holds bootstrap
}

// Find returns the resolver function in the CloudFormation template tpl:
// the function whose handler is bootstrap and whose logical ID starts with
// "Resolver" (the stack's other Go function is the feed's projector).
func Find(tpl []byte) (Function, error) {
	var t struct {
		Resources map[string]struct {
			Type       string
			Metadata   map[string]any
			Properties struct {
				Handler       string
				Architectures []string
				Environment   struct{ Variables map[string]any }
			}
		}
	}
	if err := json.Unmarshal(tpl, &t); err != nil {
		return Function{}, err
	}
	for id, r := range t.Resources {
		if r.Type != "AWS::Lambda::Function" || r.Properties.Handler != "bootstrap" || !strings.HasPrefix(id, "Resolver") {
			continue
		}
		f := Function{LogicalID: id, Architecture: "x86_64"}
		if len(r.Properties.Architectures) > 0 {
			f.Architecture = r.Properties.Architectures[0]
		}
		for name := range r.Properties.Environment.Variables {
			f.Declared = append(f.Declared, name)
		}
		slices.Sort(f.Declared)
		f.AssetPath, _ = r.Metadata["aws:asset:path"].(string)
		return f, nil
	}
	return Function{}, errors.New("no function with handler bootstrap in the template")
}

// EnvVars returns the env-vars file for f: vars under its logical ID. Every
// variable must be one the template declares, or SAM would drop it silently.
func EnvVars(f Function, vars map[string]string) ([]byte, error) {
	for name := range vars {
		if !slices.Contains(f.Declared, name) {
			return nil, fmt.Errorf("the template's function does not declare %s, so SAM would not pass it", name)
		}
	}
	return json.MarshalIndent(map[string]map[string]string{f.LogicalID: vars}, "", "  ")
}

// Local returns the variables that point the function at DynamoDB Local at
// endpoint, table table, with a local token key.
func Local(endpoint, table string) map[string]string {
	return map[string]string{
		"TABLE_NAME":                table,
		"AWS_ENDPOINT_URL_DYNAMODB": endpoint,
		"NEXT_TOKEN_KEY":            "local-sam-token-key",
		"NEXT_TOKEN_SECRET_ARN":     "",
		"METRICS_NAMESPACE":         "AppSyncDynamoLocal",
		// No Systems Manager locally: the reading named, not the probe's.
		"SELECTION_READING_PARAMETER": "",
		"SELECTION_READING":           "first-occurrence",
	}
}

// NoResponse is what SAM prints when the function's container answered
// nothing (and it still exits 0).
const NoResponse = "No response from invoke container"

// CheckReply returns an error unless reply is a function's answer to event:
// for a batch event (a JSON array of n events), a JSON array of n results;
// for a single event, any JSON value but the runtime's own failure (an
// errorType of Runtime.* or Sandbox.*: the process exited, timed out, ran
// out of memory). A field's error ({"errorType":"NotFound",...}) is an
// answer: it is how a direct Lambda resolver reports one to AppSync.
func CheckReply(event, reply []byte) error {
	var failure struct{ ErrorType, ErrorMessage string }
	if json.Unmarshal(reply, &failure) == nil && (strings.HasPrefix(failure.ErrorType, "Runtime.") || strings.HasPrefix(failure.ErrorType, "Sandbox.")) {
		return fmt.Errorf("the function failed: %s", clip(reply))
	}
	var batch []json.RawMessage
	if json.Unmarshal(event, &batch) == nil {
		var got []json.RawMessage
		if err := json.Unmarshal(reply, &got); err != nil {
			return fmt.Errorf("the reply to a batch of %d events is not a JSON array: %q", len(batch), clip(reply))
		}
		if len(got) != len(batch) {
			return fmt.Errorf("the reply holds %d results for a batch of %d events", len(got), len(batch))
		}
		return nil
	}
	if !json.Valid(reply) || len(strings.TrimSpace(string(reply))) == 0 {
		return fmt.Errorf("the reply is not JSON: %q", clip(reply))
	}
	return nil
}

func clip(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// Image matches, as a reference filter of docker images, the image SAM runs
// a provided.al2023 function of arch in (AWS's lambda/provided image of
// that tag, from its public registry).
func Image(arch string) string { return "*/lambda/provided:al2023-" + arch }

// Network is the user-defined Docker network make sam-invoke attaches the
// function's container to (--docker-network): SAM connects the container
// to it, and the container reaches the host, where DynamoDB Local listens,
// at the network's gateway.
const Network = "appsync-dynamo-sam"

// HostEndpoint is the URL at which a container on a user-defined network
// reaches port on the host: the network's gateway on Linux; Docker
// Desktop's host.docker.internal on macOS and Windows, where the gateway
// is inside Docker's VM.
func HostEndpoint(goos, gateway string, port int) string {
	host := gateway
	if goos != "linux" {
		host = "host.docker.internal"
	}
	return fmt.Sprintf("http://%s:%d", host, port)
}
