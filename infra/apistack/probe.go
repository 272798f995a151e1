package apistack // feature: probe

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsappsync"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/probe"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The deployment's selection probe (lambda/cmd/probe): a custom resource,
// run once the API, its resolvers and the resolver function exist, that asks
// the API how AppSync writes a merged field's selection and writes the
// verdict into a parameter the function reads (SELECTION_READING_PARAMETER).

// ProbeActions are what the probe does on the table: its post written
// (BatchWriteItem) and deleted (DeleteItem), in the post's partition only.
var ProbeActions = []string{"dynamodb:BatchWriteItem", "dynamodb:DeleteItem"}

// readingParameter is the name of the parameter the probe writes its
// verdict into.
func readingParameter(stack awscdk.Stack) string {
	return "/" + *stack.StackName() + "/selection-reading"
}

// parameterArn is the parameter's ARN.
func parameterArn(stack awscdk.Stack) string {
	return *stack.FormatArn(&awscdk.ArnComponents{Service: jsii.String("ssm"), Resource: jsii.String("parameter"),
		ResourceName: jsii.String(strings.TrimPrefix(readingParameter(stack), "/"))})
}

// readVerdict lets the resolver function read the probe's verdict.
func readVerdict(stack awscdk.Stack, fn awslambda.Function) {
	fn.AddEnvironment(jsii.String("SELECTION_READING_PARAMETER"), jsii.String(readingParameter(stack)), nil)
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("ssm:GetParameter"), Resources: jsii.Strings(parameterArn(stack)),
	}))
}

// selectionProbe defines the probe's function and the custom resource that
// runs it after api (its resolvers included) and fn, and again whenever the
// function's code, the schema or the child resolver change (its Inputs).
func selectionProbe(stack awscdk.Stack, props *Props, api awsappsync.GraphqlApi, fn awslambda.Function, table awsdynamodb.TableV2) awscdk.CustomResource {
	probeFn := goFunction(stack, "SelectionProbe", architecture(props), &awslambda.FunctionProps{
		Description: jsii.String("The deployment's selection probe: how AppSync writes a merged field's selection (a custom resource)"),
		Code:        awslambda.Code_FromAsset(jsii.String(props.ProbeDir), nil),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(60)),
		Environment: &map[string]*string{"TABLE_NAME": table.TableName(), "METRICS_NAMESPACE": stack.StackName()},
	})
	probeFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings(ProbeActions...), Resources: jsii.Strings(*table.TableArn()),
		Conditions: &map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []string{store.PostPK(probe.Post.ID)}}},
	}))
	probeFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{Actions: jsii.Strings("appsync:GraphQL"), Resources: fieldArns(api, probe.Fields())}))
	probeFn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("ssm:PutParameter", "ssm:DeleteParameter"), Resources: jsii.Strings(parameterArn(stack)),
	}))
	suppress(probeFn, "AwsSolutions-IAM4", "AWSLambdaBasicExecutionRole: what Lambda needs to write the function's own logs")
	suppress(probeFn, "AwsSolutions-IAM5", "X-Ray's PutTraceSegments, which takes no resource")
	suppress(probeFn, "Serverless-LambdaDLQ", "CloudFormation invokes it synchronously, as a custom resource; a dead-letter queue only receives asynchronous events")
	pinned := ""
	if props.SelectionReading != nil {
		pinned = props.SelectionReading.String()
	}
	run := awscdk.NewCustomResource(stack, jsii.String("ProbedReading"), &awscdk.CustomResourceProps{
		ServiceToken: probeFn.FunctionArn(), ResourceType: jsii.String("Custom::SelectionProbe"),
		Properties: &map[string]any{"GraphQLUrl": api.GraphqlUrl(), "Parameter": readingParameter(stack), "Pinned": pinned,
			"Inputs": probeInputs(props)},
	})
	run.Node().AddDependency(api, fn)
	daily(stack, probeFn, &map[string]any{"GraphQLUrl": api.GraphqlUrl(), "Parameter": readingParameter(stack), "Pinned": pinned})
	return run
}

// daily runs the probe again once a day, with the resource's properties,
// and alarms when it fails: AppSync may come to write selections another
// way between deployments (docs/deploying.md).
func daily(stack awscdk.Stack, probeFn awslambda.Function, properties *map[string]any) {
	rule := awsevents.NewRule(stack, jsii.String("SelectionProbeDaily"), &awsevents.RuleProps{
		Description: jsii.String("The selection probe, daily: how AppSync writes a merged field's selection"),
		Schedule:    awsevents.Schedule_Rate(awscdk.Duration_Days(jsii.Number(1))),
	})
	rule.AddTarget(awseventstargets.NewLambdaFunction(probeFn, &awseventstargets.LambdaFunctionProps{
		Event:         awsevents.RuleTargetInput_FromObject(map[string]any{"ResourceProperties": properties}),
		RetryAttempts: jsii.Number(0), // the probe reports its own failure; a retry would find the same
	}))
	suppress(rule, "Serverless-EventBusDLQ", "a missed daily probe is tomorrow's: the probe's own failures are its ProbeFailures metric and its alarm")
	failures := awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: stack.StackName(), MetricName: jsii.String(probe.FailureMetric),
		DimensionsMap: &map[string]*string{probe.MetricDimension: jsii.String(probe.MetricFunction)}, Statistic: jsii.String("Sum"),
		Period: awscdk.Duration_Days(jsii.Number(1))})
	awscloudwatch.NewAlarm(stack, jsii.String("SelectionProbeFailed"), &awscloudwatch.AlarmProps{
		AlarmDescription: jsii.String("the daily selection probe failed, found the shapes disagreeing or contradicting the pinned reading: see its log, and docs/deploying.md"),
		Metric:           failures, Threshold: jsii.Number(1), EvaluationPeriods: jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD, TreatMissingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
	})
}

// probeInputs is a digest of what the probe's verdict depends on: the
// resolver function's bootstrap, the schema and the child resolver. When it
// changes, CloudFormation updates the resource, and the probe runs again.
func probeInputs(props *Props) string {
	h := sha256.New()
	code, err := os.ReadFile(filepath.Join(props.LambdaDir, "bootstrap"))
	if err != nil {
		panic("apistack: the resolver's bootstrap: " + err.Error())
	}
	sdl, err := os.ReadFile(props.schemaFile())
	if err != nil {
		panic("apistack: " + err.Error())
	}
	for _, b := range [][]byte{code, sdl, []byte(appsyncjs.Child)} {
		sum := sha256.Sum256(b)
		h.Write(sum[:])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
