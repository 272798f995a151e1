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
	}
}
