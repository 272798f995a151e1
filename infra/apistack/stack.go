// Package apistack is the CDK stack of the API: the DynamoDB table with its
// global secondary indexes (from lambda/store.Schema), the AppSync API (from
// schema/schema.graphql, with the wired features' parts merged into it)
// with Cognito user pools and API-key auth, the Go Lambda, and one resolver
// per routed field, the core's and the wired features' (Wired), on the
// Lambda data source: direct Lambda resolvers on root fields and mutations,
// the JavaScript resolver appsyncjs/child.js (APPSYNC_JS), which returns the
// parent's answer early, on the fields of objects; the consumers of the
// table's stream, the feed's projector and the features'.
package apistack

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsappsync"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/schema"
)

// Props configure the stack.
type Props struct {
	awscdk.StackProps
	// Features are the optional features wired in (lambda/trending's, for
	// one): their parts of the schema, their routed fields and their
	// consumers of the table's stream, beside the core's.
	Features []Feature
	// LambdaDir is the directory holding the built bootstrap (make build).
	LambdaDir string
	// ProjectorDir is the directory holding the feed projector's built
	// bootstrap (make build).
	ProjectorDir string
	// ProbeDir is the directory holding the deployment's selection probe's
	// built bootstrap (make build).
	ProbeDir string
	// Throwaway relaxes what protects data: the table and the user pool are
	// destroyed with the stack and deletion protection is off. For test stacks.
	Throwaway bool
	// ReservedConcurrency, when set (-c reservedConcurrency=N), caps the
	// function's concurrent executions.
	ReservedConcurrency *float64
	// Architecture is the functions' instruction set: "arm64" (the default,
	// as deployed) or "x86_64" (to run them natively on an x86_64 host with
	// sam local invoke; -c arch=x86_64, make ... ARCH=x86_64). The
	// bootstraps in LambdaDir and ProjectorDir must be built for it.
	Architecture string
	// SelectionReading, when set (-c selectionReading=...), pins how the
	// resolver function takes AppSync to write the selection of a field a
	// query selects more than once (appsync.Reading). Unset, the
	// deployment's probe (probe.go) finds how AppSync writes it and hands the
	// function its verdict; the function reads first-occurrence, right
	// whichever way AppSync writes it, until it has it. Pinned, the probe
	// still runs, and fails the deployment where every-occurrence is pinned
	// and AppSync writes less (docs/deploying.md).
	SelectionReading *appsync.Reading
	// APIKeyExpires is when the public-read API key expires: a fixed date (the
	// app reads it from cdk.json), so that every synth writes the same
	// template. AppSync takes 1 to 365 days from the deploy; redeploying
	// with a later date renews the same key.
	APIKeyExpires time.Time
}

// Function settings. The handler is CPU-bound JSON work plus DynamoDB round
// trips: a 100-event Post.author batch as AppSync sends it (365 kB) takes
// about 0.17 ms of CPU on a 2-core development machine (BenchmarkTraffic,
// docs/benchmarks.md), so memory buys CPU share, not room; 512 MB is a third
// of a vCPU. The timeout stays well under AppSync's
// 30 s request limit so that a slow invocation fails as a Lambda error
// AppSync can report, and bounds BatchGetItem and transaction retries.
const (
	MemoryMB       = 512
	TimeoutSeconds = int(resolver.FunctionTimeout / time.Second) // the local AppSync gives invocations the same
	LogRetention   = awslogs.RetentionDays_ONE_MONTH
)

// Actions are the DynamoDB operations the Lambda performs, and nothing else:
// reads (GetItem, Query, BatchGetItem), conditional writes (UpdateItem), the
// actions inside TransactWriteItems (PutItem, UpdateItem, DeleteItem,
// ConditionCheckItem) and the comment sweep of deletePost (BatchWriteItem).
var Actions = []string{
	"dynamodb:GetItem", "dynamodb:Query", "dynamodb:BatchGetItem",
	"dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem", "dynamodb:ConditionCheckItem",
	"dynamodb:BatchWriteItem",
}

// IndexActions are what the Lambda does on the table's indexes: Query only.
var IndexActions = []string{"dynamodb:Query"}

// The projector's event source: records older than MaxRecordAge (the
// stream keeps 24 hours) go to the on-failure queue unapplied, as do those
// of a batch that failed past its retries.
const MaxRecordAge = 6 * time.Hour

// New defines the stack.
func New(scope constructs.Construct, id string, props *Props) awscdk.Stack {
	stack := awscdk.NewStack(scope, jsii.String(id), &props.StackProps)
	removal := awscdk.RemovalPolicy_RETAIN
	if props.Throwaway {
		removal = awscdk.RemovalPolicy_DESTROY
	}
	table := awsdynamodb.NewTableV2(stack, jsii.String("Table"), tableProps(removal, !props.Throwaway))
	users, client := userPool(stack, removal, props.Throwaway)
	api := graphqlAPI(stack, id, props, users)
	fn := resolverFunction(stack, props, table)
	resolvers(api, fn, props.table())
	readVerdict(stack, fn)                       // feature: probe
	selectionProbe(stack, props, api, fn, table) // feature: probe
	var watched []consumerWatch
	for _, c := range props.consumers() {
		f, failed := streamFunction(stack, table, api, props, c)
		watched = append(watched, consumerWatch{c, f, failed})
	}
	defend(stack, api)
	watch(stack, api, fn, watched)
	outputs(stack, props, api, users, client, table, fn)
	return stack
}

// userPool is the Cognito user pool of the default auth mode, and its app
// client.
func userPool(stack awscdk.Stack, removal awscdk.RemovalPolicy, throwaway bool) (awscognito.UserPool, awscognito.UserPoolClient) {
	users := awscognito.NewUserPool(stack, jsii.String("Users"), &awscognito.UserPoolProps{
		SelfSignUpEnabled: jsii.Bool(true),
		SignInAliases:     &awscognito.SignInAliases{Email: jsii.Bool(true)},
		AutoVerify:        &awscognito.AutoVerifiedAttrs{Email: jsii.Bool(true)},
		Mfa:               awscognito.Mfa_OPTIONAL,
		MfaSecondFactor:   &awscognito.MfaSecondFactor{Otp: jsii.Bool(true), Sms: jsii.Bool(false)},
		PasswordPolicy: &awscognito.PasswordPolicy{MinLength: jsii.Number(12), RequireLowercase: jsii.Bool(true),
			RequireUppercase: jsii.Bool(true), RequireDigits: jsii.Bool(true), RequireSymbols: jsii.Bool(true)},
		AccountRecovery:    awscognito.AccountRecovery_EMAIL_ONLY,
		RemovalPolicy:      removal,
		DeletionProtection: jsii.Bool(!throwaway),
	})
	suppress(users, "AwsSolutions-COG2", "MFA is optional (TOTP): a public blog lets readers sign up without a second factor; writers may turn it on")
	suppress(users, "AwsSolutions-COG8", "the Plus feature plan (threat protection) is billed per user; a deployer who needs it turns it on")
	client := users.AddClient(jsii.String("WebClient"), &awscognito.UserPoolClientOptions{
		AuthFlows:                  &awscognito.AuthFlow{UserPassword: jsii.Bool(true), UserSrp: jsii.Bool(true)},
		PreventUserExistenceErrors: jsii.Bool(true),
		DisableOAuth:               jsii.Bool(true), // no hosted UI: no implicit (or any OAuth) flow
	})
	return users, client
}

// graphqlAPI is the AppSync API: the schema, user pools by default and the
// API key for public reads, the limits on hostile queries, and its field
// logs.
func graphqlAPI(stack awscdk.Stack, id string, props *Props, users awscognito.UserPool) awsappsync.GraphqlApi {
	api := awsappsync.NewGraphqlApi(stack, jsii.String("Api"), &awsappsync.GraphqlApiProps{
		Name:       jsii.String(id),
		Definition: awsappsync.Definition_FromFile(jsii.String(props.schemaFile())),
		AuthorizationConfig: &awsappsync.AuthorizationConfig{
			DefaultAuthorization: &awsappsync.AuthorizationMode{
				AuthorizationType: awsappsync.AuthorizationType_USER_POOL,
				UserPoolConfig:    &awsappsync.UserPoolConfig{UserPool: users},
			},
			AdditionalAuthorizationModes: &[]*awsappsync.AuthorizationMode{{
				AuthorizationType: awsappsync.AuthorizationType_API_KEY,
				ApiKeyConfig: &awsappsync.ApiKeyConfig{
					Description: jsii.String("public reads"),
					Expires:     awscdk.Expiration_AtTimestamp(jsii.Number(float64(props.APIKeyExpires.UnixMilli()))),
				},
			}, {
				// The deployment's selection probe: it may read what
				// lambda/probe.Fields names, as its role allows (probe.go).
				AuthorizationType: awsappsync.AuthorizationType_IAM,
			}},
		},
		XrayEnabled: jsii.Bool(true),
		// What AppSync measures, by resolver, by data source and by named
		// operation (watch.go draws it; its cost: docs/deploying.md).
		EnhancedMetricsConfig: &awsappsync.EnhancedMetricsConfig{
			ResolverLevelMetricsBehavior:   awsappsync.ResolverLevelMetricsBehavior_FULL_REQUEST_RESOLVER_METRICS,
			DataSourceLevelMetricsBehavior: awsappsync.DataSourceLevelMetricsBehavior_FULL_REQUEST_DATA_SOURCE_METRICS,
			OperationLevelMetricsConfig:    awsappsync.OperationLevelMetricsConfig_ENABLED,
		},
		// Hostile queries: the limits and their reasons are in lambda/resolver/routes.go.
		QueryDepthLimit:    jsii.Number(resolver.QueryDepthLimit),
		ResolverCountLimit: jsii.Number(resolver.ResolverCountLimit),
	})
	for _, ack := range []string{"@aws-cdk/aws-appsync:fullRequestResolverMetrics", "@aws-cdk/aws-appsync:fullRequestDataSourceMetrics"} {
		awscdk.Annotations_Of(api).AcknowledgeWarning(jsii.String(ack), jsii.String("every resolver and data source measured, on purpose"))
	}
	// Field logs: errors only, without request headers and resolver payloads
	// (identity claims, email), into a log group of the stack's with its
	// retention. Set on the L1 resource: GraphqlApi's logConfig would add a
	// log-retention custom resource (a Lambda function) to the stack.
	apiLogs := awslogs.NewLogGroup(stack, jsii.String("ApiLogs"), &awslogs.LogGroupProps{
		LogGroupName: jsii.String("/aws/appsync/apis/" + *api.ApiId()), Retention: LogRetention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	apiLogsRole := awsiam.NewRole(stack, jsii.String("ApiLogsRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("appsync.amazonaws.com"), nil),
	})
	apiLogs.GrantWrite(apiLogsRole)
	suppress(apiLogsRole, "AwsSolutions-IAM5", "CreateLogStream and PutLogEvents on the streams of the API's own log group (log-group:...:*)")
	api.Node().DefaultChild().(awsappsync.CfnGraphQLApi).SetLogConfig(&awsappsync.CfnGraphQLApi_LogConfigProperty{
		CloudWatchLogsRoleArn: apiLogsRole.RoleArn(), FieldLogLevel: jsii.String("ERROR"), ExcludeVerboseContent: jsii.Bool(true),
	})
	suppress(api, "AwsSolutions-ASC3", "request logging is on at ERROR; verbose content is excluded because it logs request headers and identity claims (email)")
	return api
}

// resolverFunction is the Go function behind every resolver, with the key
// that signs its tokens and what it may do on the table.
func resolverFunction(stack awscdk.Stack, props *Props, table awsdynamodb.TableV2) awslambda.Function {
	tokenKey := awssecretsmanager.NewSecret(stack, jsii.String("NextTokenKey"), &awssecretsmanager.SecretProps{
		Description:          jsii.String("Signs the API's pagination tokens (nextToken)"),
		GenerateSecretString: &awssecretsmanager.SecretStringGenerator{PasswordLength: jsii.Number(48), ExcludePunctuation: jsii.Bool(true)},
	})
	suppress(tokenKey, "AwsSolutions-SMG4", "rotating the signing key would invalidate every nextToken a client holds; rotate by hand (docs/deploying.md)")

	fn := goFunction(stack, "Resolver", architecture(props), &awslambda.FunctionProps{
		Description:                  jsii.String("Every AppSync direct resolver of the API"),
		Code:                         awslambda.Code_FromAsset(jsii.String(props.LambdaDir), nil),
		Timeout:                      awscdk.Duration_Seconds(jsii.Number(TimeoutSeconds)),
		ReservedConcurrentExecutions: props.ReservedConcurrency,
		Environment: &map[string]*string{
			"TABLE_NAME": table.TableName(),
			// The secret's ARN, not its value: the function reads the key at
			// start-up, so it is in neither the template nor the function's
			// configuration.
			"NEXT_TOKEN_SECRET_ARN": tokenKey.SecretArn(),
			// The cost metrics of two stacks in one account do not mix.
			"METRICS_NAMESPACE": stack.StackName(),
			// Pinned, or "": the deployment's probe's verdict
			// (SELECTION_READING_PARAMETER, probe.go).
			"SELECTION_READING": jsii.String(props.pinnedReading()),
			// Declared empty, for `sam local invoke` (make sam-invoke) to
			// override: SAM passes only the variables the template declares.
			// Empty, they change nothing in AWS.
			"AWS_ENDPOINT_URL_DYNAMODB": jsii.String(""),
			"NEXT_TOKEN_KEY":            jsii.String(""),
		},
	})
	for _, f := range props.Features {
		for name, value := range f.Environment {
			fn.AddEnvironment(jsii.String(name), jsii.String(value), nil)
		}
	}
	tokenKey.GrantRead(fn, nil) // GetSecretValue and DescribeSecret on this one secret
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(Actions...),
		Resources: jsii.Strings(*table.TableArn()),
	}))
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(IndexActions...),
		Resources: jsii.Strings(*table.TableArn() + "/index/*"),
	}))
	suppress(fn, "AwsSolutions-IAM4", "AWSLambdaBasicExecutionRole: what Lambda needs to write the function's own logs")
	suppress(fn, "AwsSolutions-IAM5", "Query on the table's indexes (GSI1, GSI2: index/*), and X-Ray's PutTraceSegments, which takes no resource")
	suppress(fn, "Serverless-LambdaDLQ", "AppSync invokes the function synchronously; a dead-letter queue only receives asynchronous events")
	return fn
}

// resolvers are the API's resolvers, one per routed field, on one Lambda
// data source: a direct one for each root field and mutation, the
// JavaScript child resolver for each field of an object, and the
// JavaScript root resolver for each routed subscription and each mutation
// that Invalidates.
func resolvers(api awsappsync.GraphqlApi, fn awslambda.Function, table *resolver.Routes) {
	ds := api.AddLambdaDataSource(jsii.String("ResolverSource"), fn, nil)
	suppress(ds, "AwsSolutions-IAM5", "AppSync may invoke the function and its versions (function ARN:*), the grant CDK makes")
	for _, r := range table.All() {
		props := &awsappsync.BaseResolverProps{TypeName: jsii.String(r.Type), FieldName: jsii.String(r.Field)}
		if r.MaxBatchSize > 0 {
			props.MaxBatchSize = jsii.Number(r.MaxBatchSize)
		}
		switch {
		case r.EarlyReturn():
			props.Runtime = awsappsync.FunctionRuntime_JS_1_0_0()
			props.Code = awsappsync.Code_FromInline(jsii.String(appsyncjs.Child))
		case r.Subscribes(), r.Invalidates:
			props.Runtime = awsappsync.FunctionRuntime_JS_1_0_0()
			props.Code = awsappsync.Code_FromInline(jsii.String(appsyncjs.Root))
		}
		ds.CreateResolver(jsii.String(resolverID(r)), props)
	}
}

// outputs are what the stack tells its deployer (make smoke reads them).
func outputs(stack awscdk.Stack, props *Props, api awsappsync.GraphqlApi, users awscognito.UserPool, client awscognito.UserPoolClient,
	table awsdynamodb.TableV2, fn awslambda.Function) {
	out := func(name, value, description string) {
		awscdk.NewCfnOutput(stack, jsii.String(name), &awscdk.CfnOutputProps{Value: jsii.String(value), Description: jsii.String(description)})
	}
	out("GraphQLUrl", *api.GraphqlUrl(), "The GraphQL endpoint")
	out("ApiKeyId", *api.ApiKey(), "The API key for public reads (x-api-key)")
	out("UserPoolId", *users.UserPoolId(), "Cognito user pool of the default auth mode")
	out("UserPoolClientId", *client.UserPoolClientId(), "App client for signing in")
	out("TableName", *table.TableName(), "The DynamoDB table")
	out("FunctionName", *fn.FunctionName(), "The resolver Lambda")
	reading := cmp.Or(props.pinnedReading(), appsync.FirstOccurrence.String())
	reading = cmp.Or(props.pinnedReading(), "probed") // feature: probe

	out("SelectionReadingParameter", readingParameter(stack), "The parameter holding how AppSync writes a merged field's selection, as the deployment's probe found it (the resolver Lambda reads it)") // feature: probe
	out("SelectionReading", reading, "How the resolver Lambda reads a merged field's selection: pinned (-c selectionReading), probed (the parameter's) or first-occurrence")
}

// pinnedReading is the name of the reading the function is pinned to, ""
// for none.
func (p *Props) pinnedReading() string {
	if p.SelectionReading == nil {
		return ""
	}
	return p.SelectionReading.String()
}

// architecture is props' Architecture ("": arm64); New refuses another.
func architecture(props *Props) awslambda.Architecture {
	if props.Architecture == "" {
		return Architectures["arm64"]
	}
	arch, ok := Architectures[props.Architecture]
	if !ok {
		panic(fmt.Sprintf("apistack: architecture %q is neither arm64 nor x86_64", props.Architecture))
	}
	return arch
}

// Architectures are the functions' instruction sets the stack takes
// (Props.Architecture), by name.
var Architectures = map[string]awslambda.Architecture{"arm64": awslambda.Architecture_ARM_64(), "x86_64": awslambda.Architecture_X86_64()}

// goFunction defines a Go function of the stack from props (its description,
// code, timeout, environment): provided.al2023 on arch, handler bootstrap,
// MemoryMB, active tracing, JSON logs with a level on every line into a log
// group of its own (id+"Logs", kept LogRetention).
func goFunction(stack awscdk.Stack, id string, arch awslambda.Architecture, props *awslambda.FunctionProps) awslambda.Function {
	props.Runtime, props.Architecture, props.Handler = awslambda.Runtime_PROVIDED_AL2023(), arch, jsii.String("bootstrap")
	props.MemorySize, props.Tracing = jsii.Number(MemoryMB), awslambda.Tracing_ACTIVE
	props.LogGroup = awslogs.NewLogGroup(stack, jsii.String(id+"Logs"), &awslogs.LogGroupProps{
		Retention: LogRetention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	props.LoggingFormat = awslambda.LoggingFormat_JSON
	props.ApplicationLogLevelV2, props.SystemLogLevelV2 = awslambda.ApplicationLogLevel_INFO, awslambda.SystemLogLevel_WARN
	return awslambda.NewFunction(stack, jsii.String(id), props)
}

// Consumer is one consumer of the table's stream: a function of the
// projector's code (lambda/cmd/projector) run as its Projection, and its
// event source's settings.
type Consumer struct {
	ID, Description string
	Projection      string // its PROJECTION
	Actions         []string
	IndexActions    []string // none: it reads no index
	BatchSize       int
	Retries         int
	Filters         []map[string]any
	Window          time.Duration // its tumbling window; 0: none
	// GaveUp is the description of the alarm on its on-failure queue.
	GaveUp string
	// APIFields are the API's fields ("Mutation.invalidatePost") it calls
	// as an IAM caller: it gets the API's URL (GRAPHQL_URL) and may call
	// those fields, and no other.
	APIFields []string
}

// Feature is an optional feature's part of the stack: its part of the
// schema (merged into schema/schema.graphql: schema.Merge), its routed
// fields, its consumer of the table's stream (nil: none), its projection
// applied by the projector (nil: none), and the environment it sets on
// the resolver's function.
type Feature struct {
	SDL         string
	Routes      []resolver.Route
	Consumer    *Consumer
	Projected   *Projected
	Environment map[string]string
}

// Projected is what a feature's projection adds to the projector's event
// source and role: the records it applies (its filters) and what it does
// on the table and on its indexes (which its tests record).
type Projected struct {
	Filters               []map[string]any
	Actions, IndexActions []string
	APIFields             []string // the API's fields it calls (Consumer.APIFields)
}

// consumers are the stream's consumers: the projector, when a feature has
// it project something (none reads the stream for nothing), and each
// feature's own.
func (p *Props) consumers() []Consumer {
	var cs []Consumer
	cs = append(cs, p.projector()...) // feature: projector
	for _, f := range p.Features {
		if f.Consumer != nil {
			cs = append(cs, *f.Consumer)
		}
	}
	return cs
}

// table is the routed fields: the core's and the features'.
func (p *Props) table() *resolver.Routes {
	var rs [][]resolver.Route
	for _, f := range p.Features {
		rs = append(rs, f.Routes)
	}
	return resolver.NewRoutes(rs...)
}

// schemaFile writes the schema AppSync is given, the core's with the
// features' parts merged into it, to a file named after its content, and
// returns its path (CDK reads it into the template).
func (p *Props) schemaFile() string {
	var fragments []string
	for _, f := range p.Features {
		fragments = append(fragments, f.SDL)
	}
	sdl, err := schema.Merge(schema.SDL, fragments...)
	if err != nil {
		panic("apistack: " + err.Error())
	}
	sum := sha256.Sum256([]byte(sdl))
	path := filepath.Join(os.TempDir(), "appsync-schema-"+hex.EncodeToString(sum[:8])+".graphql")
	if err := os.WriteFile(path, []byte(sdl), 0o644); err != nil {
		panic("apistack: " + err.Error())
	}
	return path
}

// streamFunction defines the consumer's function on the table's stream: the
// event source with its own settings, filters and window, partial batch
// responses, bisection, bounded retries and record age, and an encrypted
// on-failure queue.
func streamFunction(stack awscdk.Stack, table awsdynamodb.TableV2, api awsappsync.GraphqlApi, props *Props, c Consumer) (awslambda.Function, awssqs.Queue) {
	fn := goFunction(stack, c.ID, architecture(props), &awslambda.FunctionProps{
		Description: jsii.String(c.Description),
		Code:        awslambda.Code_FromAsset(jsii.String(props.ProjectorDir), nil),
		Timeout:     awscdk.Duration_Seconds(jsii.Number(60)), // a batch's writes, not a GraphQL request
		Environment: &map[string]*string{"TABLE_NAME": table.TableName(), "PROJECTION": jsii.String(c.Projection)},
	})
	fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings(c.Actions...),
		Resources: jsii.Strings(*table.TableArn()),
	}))
	if len(c.IndexActions) > 0 {
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings(c.IndexActions...),
			Resources: jsii.Strings(*table.TableArn() + "/index/*"),
		}))
	}
	if len(c.APIFields) > 0 {
		fn.AddEnvironment(jsii.String("GRAPHQL_URL"), api.GraphqlUrl(), nil)
		fn.AddToRolePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions: jsii.Strings("appsync:GraphQL"), Resources: fieldArns(api, c.APIFields),
		}))
	}
	failed := awssqs.NewQueue(stack, jsii.String(c.ID+"Failures"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
	})
	suppress(failed, "AwsSolutions-SQS3", "it is the on-failure destination of a stream consumer's event source: a queue of the records given up on, read by hand")
	suppress(failed, "Serverless-SQSRedrivePolicy", "it is itself the dead-letter queue of a stream consumer's event source; nothing consumes it to redrive")
	filters := make([]*map[string]any, len(c.Filters))
	for i, f := range c.Filters {
		filters[i] = awslambda.FilterCriteria_Filter(&f)
	}
	source := &awslambdaeventsources.DynamoEventSourceProps{
		StartingPosition:        awslambda.StartingPosition_TRIM_HORIZON,
		BatchSize:               jsii.Number(c.BatchSize),
		BisectBatchOnError:      jsii.Bool(true),
		RetryAttempts:           jsii.Number(c.Retries),
		MaxRecordAge:            awscdk.Duration_Seconds(jsii.Number(MaxRecordAge.Seconds())),
		ReportBatchItemFailures: jsii.Bool(true),
		OnFailure:               awslambdaeventsources.NewSqsDlq(failed),
		Filters:                 &filters,
	}
	if c.Window > 0 {
		source.TumblingWindow = awscdk.Duration_Seconds(jsii.Number(c.Window.Seconds()))
	}
	fn.AddEventSource(awslambdaeventsources.NewDynamoEventSource(table, source))
	suppress(fn, "AwsSolutions-IAM4", "AWSLambdaBasicExecutionRole: what Lambda needs to write the function's own logs")
	suppress(fn, "AwsSolutions-IAM5", "Query on the table's indexes (GSI1, GSI2: index/*), the stream read grant (stream/*), and X-Ray's PutTraceSegments, which takes no resource")
	suppress(fn, "Serverless-LambdaDLQ", "the event source's on-failure destination receives what the function cannot apply; a function DLQ only receives asynchronous events")
	return fn, failed
}

// suppress records on c, and its children, that cdk-nag's rule id does not
// apply, and why.
func suppress(c constructs.IConstruct, id, reason string) {
	cdknag.NagSuppressions_AddResourceSuppressions(c, &[]*cdknag.NagPackSuppression{{Id: jsii.String(id), Reason: jsii.String(reason)}}, jsii.Bool(true))
}

// tableProps builds the table from store.Schema, the one definition the
// tests and the local server use too.
func tableProps(removal awscdk.RemovalPolicy, protect bool) *awsdynamodb.TablePropsV2 {
	attr := func(name string) *awsdynamodb.Attribute {
		return &awsdynamodb.Attribute{Name: jsii.String(name), Type: awsdynamodb.AttributeType_STRING}
	}
	var gsis []*awsdynamodb.GlobalSecondaryIndexPropsV2
	for _, ix := range store.Schema.Indexes {
		gsis = append(gsis, &awsdynamodb.GlobalSecondaryIndexPropsV2{
			IndexName:      jsii.String(ix.Name),
			PartitionKey:   attr(ix.Keys.PartitionKey),
			SortKey:        attr(ix.Keys.SortKey),
			ProjectionType: awsdynamodb.ProjectionType_ALL,
		})
	}
	var stream awsdynamodb.StreamViewType
	if store.Schema.Stream {
		stream = awsdynamodb.StreamViewType_NEW_AND_OLD_IMAGES
	}
	return &awsdynamodb.TablePropsV2{
		DynamoStream:           stream,
		PartitionKey:           attr(store.Schema.Keys.PartitionKey),
		SortKey:                attr(store.Schema.Keys.SortKey),
		GlobalSecondaryIndexes: &gsis,
		Billing:                awsdynamodb.Billing_OnDemand(nil),
		PointInTimeRecoverySpecification: &awsdynamodb.PointInTimeRecoverySpecification{
			PointInTimeRecoveryEnabled: jsii.Bool(true),
		},
		DeletionProtection:  jsii.Bool(protect),
		RemovalPolicy:       removal,
		TimeToLiveAttribute: jsii.String("ttl"), // the feed's entries (feed.TTL)
	}
}

// resolverID names a resolver's construct: "QueryPostResolver".
func resolverID(r resolver.Route) string {
	return fmt.Sprintf("%s%s%sResolver", r.Type, strings.ToUpper(r.Field[:1]), r.Field[1:])
}

// distinct returns filters without repeats (CloudFormation refuses an event
// source mapping's filters that are not unique), in their order.
func distinct(filters []map[string]any) []map[string]any {
	seen := map[string]bool{}
	var out []map[string]any
	for _, f := range filters {
		key, _ := json.Marshal(f) // maps encode with sorted keys
		if !seen[string(key)] {
			seen[string(key)] = true
			out = append(out, f)
		}
	}
	return out
}

// fieldArns are the ARNs of the API's fields ("Type.field"), which
// appsync:GraphQL grants a call of.
func fieldArns(api awsappsync.GraphqlApi, fields []string) *[]*string {
	var arns []*string
	for _, f := range fields {
		typ, field, _ := strings.Cut(f, ".")
		arns = append(arns, jsii.String(*api.Arn()+"/types/"+typ+"/fields/"+field))
	}
	return &arns
}
