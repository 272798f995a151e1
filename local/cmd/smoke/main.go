// Command smoke runs the first-deploy check (package smoke) against a
// deployed stack (make smoke STACK=AppSyncDynamo: its outputs are read with
// the AWS CLI, and two Cognito users are signed up, confirmed and signed in:
// one for the writes, one to read its feed) or against make dev (make smoke URL=http://127.0.0.1:4000/graphql).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/smoke"
)

func main() {
	stack := flag.String("stack", "AppSyncDynamo", "the deployed stack (read with the AWS CLI)")
	url := flag.String("url", "", "a local API instead (make dev), e.g. http://127.0.0.1:4000/graphql")
	readingName := flag.String("selection-reading", appsync.EveryOccurrence.String(),
		"with -url: how the local API's Lambda reads a merged field's selection (make dev's SELECTION_READING)")
	flag.Parse()
	target, err := targetFor(*stack, *url, *readingName)
	if err == nil {
		err = smoke.Run(context.Background(), target, os.Stdout)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "smoke:", err)
		os.Exit(1)
	}
}

func targetFor(stack, url, readingName string) (smoke.Target, error) {
	if url != "" {
		reading, err := appsync.ParseReading(readingName)
		return smoke.Target{URL: url, Token: devserver.Token("smoke"), Reader: devserver.Token("smoke-reader"), Reading: reading}, err
	}
	out, err := aws("cloudformation", "describe-stacks", "--stack-name", stack, "--query", "Stacks[0].Outputs", "--output", "json")
	if err != nil {
		return smoke.Target{}, err
	}
	var outputs []struct{ OutputKey, OutputValue string }
	if err := json.Unmarshal(out, &outputs); err != nil {
		return smoke.Target{}, err
	}
	o := map[string]string{}
	for _, kv := range outputs {
		o[kv.OutputKey] = kv.OutputValue
	}
	// Throwaway Cognito users: one for the writes, one to read its feed.
	token, err := signUp(o, "smoke")
	if err != nil {
		return smoke.Target{}, err
	}
	reader, err := signUp(o, "smoke-reader")
	if err != nil {
		return smoke.Target{}, err
	}
	name := o["SelectionReading"] // a stack deployed before the output: the default
	if name == "probed" {         // the function reads the deployment's probe's verdict
		value, err := aws("ssm", "get-parameter", "--name", o["SelectionReadingParameter"], "--query", "Parameter.Value", "--output", "text")
		if err != nil {
			return smoke.Target{}, err
		}
		name = strings.TrimSpace(string(value))
	}
	reading, err := appsync.ParseReading(name)
	if err != nil {
		return smoke.Target{}, err
	}
	return smoke.Target{URL: o["GraphQLUrl"], APIKey: o["ApiKeyId"], Token: token, Reader: reader, Reading: reading}, nil
}

// signUp signs up, confirms and signs in a throwaway user of the stack's
// user pool (its outputs o), and returns its ID token.
func signUp(o map[string]string, name string) (string, error) {
	user, password := fmt.Sprintf("%s+%d@example.com", name, os.Getpid()), "Smoke-check-passw0rd!"
	if _, err := aws("cognito-idp", "sign-up", "--client-id", o["UserPoolClientId"], "--username", user, "--password", password,
		"--user-attributes", "Name=email,Value="+user); err != nil {
		return "", err
	}
	if _, err := aws("cognito-idp", "admin-confirm-sign-up", "--user-pool-id", o["UserPoolId"], "--username", user); err != nil {
		return "", err
	}
	token, err := aws("cognito-idp", "initiate-auth", "--client-id", o["UserPoolClientId"], "--auth-flow", "USER_PASSWORD_AUTH",
		"--auth-parameters", "USERNAME="+user+",PASSWORD="+password, "--query", "AuthenticationResult.IdToken", "--output", "text")
	return strings.TrimSpace(string(token)), err
}

// aws runs the AWS CLI and returns its standard output.
func aws(args ...string) ([]byte, error) {
	out, err := exec.Command("aws", args...).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil, fmt.Errorf("aws %s: %s", strings.Join(args[:2], " "), strings.TrimSpace(string(exit.Stderr)))
	}
	if err != nil {
		return nil, fmt.Errorf("the AWS CLI is needed (with credentials for the stack's account): %w", err)
	}
	return out, nil
}
