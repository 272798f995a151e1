// Command infra is the CDK app: `cdk synth` and `cdk deploy` build it from
// this folder, its own module, and run it from the repository's root (see
// cdk.json and infra/app.sh; make synth, make deploy), so paths are
// relative to the root; it builds the functions' bootstraps first
// (build.go). Context: -c throwaway=true for a stack
// whose table and user pool are destroyed with it; -c stackName=... to name it;
// apiKeyExpires (in cdk.json) is the date the public-read API key expires;
// -c reservedConcurrency=N caps the function's concurrency; -c arch=x86_64
// builds the functions for x86_64 instead of arm64 (make ... ARCH=x86_64,
// which builds the bootstraps to match); -c selectionReading=first-occurrence
// or every-occurrence pins how the resolver function reads a merged field's
// selection, which the deployment's selection probe otherwise finds out
// (docs/deploying.md).
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/example/appsync-dynamo/infra/apistack"
	"github.com/example/appsync-dynamo/lambda/appsync"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	name := "AppSyncDynamo"
	if v, ok := app.Node().TryGetContext(jsii.String("stackName")).(string); ok && v != "" {
		name = v
	}
	throwaway := app.Node().TryGetContext(jsii.String("throwaway"))
	expiry, _ := app.Node().TryGetContext(jsii.String("apiKeyExpires")).(string)
	expires, err := time.Parse(time.DateOnly, expiry)
	if err != nil {
		fmt.Fprintf(os.Stderr, "cdk.json's context needs \"apiKeyExpires\": \"YYYY-MM-DD\", 1 to 365 days ahead (got %q): %v\n", expiry, err)
		os.Exit(1)
	}
	var reserved *float64
	if v, ok := app.Node().TryGetContext(jsii.String("reservedConcurrency")).(string); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "reservedConcurrency must be a positive number, got %q\n", v)
			os.Exit(1)
		}
		reserved = jsii.Number(n)
	}
	arch, _ := app.Node().TryGetContext(jsii.String("arch")).(string)
	if _, ok := apistack.Architectures[arch]; arch != "" && !ok {
		fmt.Fprintf(os.Stderr, "arch must be arm64 or x86_64, got %q\n", arch)
		os.Exit(1)
	}
	var reading *appsync.Reading // unset: the deployment's probe decides
	if name, _ := app.Node().TryGetContext(jsii.String("selectionReading")).(string); name != "" {
		r, err := appsync.ParseReading(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		reading = &r
	}
	if err := buildFunctions(arch); err != nil {
		fmt.Fprintln(os.Stderr, "cdk:", err)
		os.Exit(1)
	}
	if os.Getenv("CDK_DEFAULT_ACCOUNT") == "" { // the CLI sets it when it finds credentials
		fmt.Fprintln(os.Stderr, "cdk: no AWS credentials found: synth needs none; deploy and diff do (aws configure, or AWS_PROFILE=<profile>)")
	}
	apistack.New(app, name, &apistack.Props{
		Architecture:        arch,
		SelectionReading:    reading,
		ReservedConcurrency: reserved,
		Features:            apistack.Wired,
		LambdaDir:           ".build/resolver",
		ProjectorDir:        ".build/projector", // feature: projector
		ProbeDir:            ".build/probe",     // feature: probe
		Throwaway:           throwaway == true || throwaway == "true",
		APIKeyExpires:       expires,
	})
	app.Synth(nil)
}
