// Command infra is the CDK app: `cdk synth` and `cdk deploy` run it in this
// folder, its own module (see cdk.json; make synth, make deploy), so paths
// are relative to it. Context: -c throwaway=true for a stack
// whose table and user pool are destroyed with it; -c stackName=... to name it.
package main

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/example/appsync-dynamo/infra/apistack"
)

func main() {
	defer jsii.Close()
	app := awscdk.NewApp(nil)
	name := "AppSyncDynamo"
	if v, ok := app.Node().TryGetContext(jsii.String("stackName")).(string); ok && v != "" {
		name = v
	}
	throwaway := app.Node().TryGetContext(jsii.String("throwaway"))
	apistack.New(app, name, &apistack.Props{
		SchemaFile: "../schema/schema.graphql",
		LambdaDir:  "../.build/resolver",
		Throwaway:  throwaway == true || throwaway == "true",
	})
	app.Synth(nil)
}
