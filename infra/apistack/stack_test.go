package apistack_test

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/aws-cdk-go/awscdk/v2/cxapi"
	"github.com/aws/jsii-runtime-go"
	"github.com/cdklabs/cdk-nag-go/cdknag/v2"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/infra/apistack"
	"github.com/example/appsync-dynamo/infra/bootstrap"
	"github.com/example/appsync-dynamo/lambda/live"      // feature: live
	"github.com/example/appsync-dynamo/lambda/projector" // feature: projector
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/samenv"
	"github.com/example/appsync-dynamo/schema"
)

type resource struct {
	Type           string
	Properties     map[string]any
	Metadata       map[string]any
	DeletionPolicy string
	DependsOn      []string
}

type template struct {
	Resources map[string]resource
	Outputs   map[string]any
	outdir    string
	findings  []string // cdk-nag's errors and warnings
}

func (t template) ofType(typ string) map[string]resource {
	out := map[string]resource{}
	for id, r := range t.Resources {
		if r.Type == typ {
			out[id] = r
		}
	}
	return out
}

func (t template) one(tb testing.TB, typ string) resource {
	tb.Helper()
	rs := t.ofType(typ)
	if len(rs) != 1 {
		tb.Fatalf("%d resources of type %s, want 1", len(rs), typ)
	}
	for _, r := range rs {
		return r
	}
	return resource{}
}

// appContext is the context cdk.json gives the app (its feature flags), with
// the asset metadata the CLI adds.
func appContext(tb testing.TB) *map[string]any {
	tb.Helper()
	raw, err := os.ReadFile("../../cdk.json")
	if err != nil {
		tb.Fatal(err)
	}
	var cfg struct{ Context map[string]any }
	if err := json.Unmarshal(raw, &cfg); err != nil {
		tb.Fatal(err)
	}
	cfg.Context["aws:cdk:enable-asset-metadata"] = true
	cfg.Context["aws:cdk:enable-path-metadata"] = true
	return &cfg.Context
}

// keyExpires is the API key's expiry the tests give: in 90 days, at midnight.
var keyExpires = time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 90)

var (
	synthOnce sync.Map // synthKey -> template
	scratch   string   // holds the synthesized outputs until the tests end
)

func TestMain(m *testing.M) {
	os.Setenv("JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "20")
	dir, err := os.MkdirTemp("", "apistack-test-")
	if err != nil {
		panic(err)
	}
	scratch = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// synth synthesizes the stack in this process (no AWS credentials needed)
// with the function built for linux/arm64 as its code.
// synthKey is what a synthesized template was made with.
type synthKey struct {
	throwaway bool
	arch      string
}

func synth(tb testing.TB, throwaway bool) template {
	tb.Helper()
	return synthFor(tb, throwaway, "arm64")
}

// synthFor synthesizes the stack with its functions built for arch
// ("arm64", "x86_64").
func synthFor(tb testing.TB, throwaway bool, arch string) template {
	tb.Helper()
	key := synthKey{throwaway, arch}
	if t, ok := synthOnce.Load(key); ok {
		return t.(template)
	}
	// The real functions, built as make build builds them, so that the
	// asset SAM runs can be checked.
	built := func(cmd string) string {
		dir, err := os.MkdirTemp(scratch, "lambda-")
		if err != nil {
			tb.Fatal(err)
		}
		if err := bootstrap.Build("../..", "./lambda/cmd/"+cmd, dir, arch); err != nil {
			tb.Fatal(err)
		}
		return dir
	}
	lambdaDir, projectorDir, probeDir := built("resolver"), built("projector"), ""
	probeDir = built("probe") // feature: probe
	outdir, err := os.MkdirTemp(scratch, "cdk.out-")
	if err != nil {
		tb.Fatal(err)
	}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(outdir), Context: appContext(tb)})
	stack := apistack.New(app, "TestStack", &apistack.Props{
		Features: apistack.Wired, LambdaDir: lambdaDir, ProjectorDir: projectorDir, ProbeDir: probeDir, Throwaway: throwaway, APIKeyExpires: keyExpires, Architecture: arch,
	})
	// The linters the ecosystem uses: cdk-nag's AwsSolutions and Serverless packs.
	awscdk.Aspects_Of(app).Add(cdknag.NewAwsSolutionsChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	awscdk.Aspects_Of(app).Add(cdknag.NewServerlessChecks(&cdknag.NagPackProps{Verbose: jsii.Bool(true)}), nil)
	app.Synth(nil)
	var findings []string
	annotations := assertions.Annotations_FromStack(stack)
	for _, found := range [][]*cxapi.SynthesisMessage{
		*annotations.FindError(jsii.String("*"), assertions.Match_AnyValue()),
		*annotations.FindWarning(jsii.String("*"), assertions.Match_AnyValue()),
	} {
		for _, m := range found {
			findings = append(findings, fmt.Sprintf("%s: %v", *m.Id, m.Entry.Data))
		}
	}
	raw, err := json.Marshal(assertions.Template_FromStack(stack, nil).ToJSON())
	if err != nil {
		tb.Fatal(err)
	}
	var t template
	if err := json.Unmarshal(raw, &t); err != nil {
		tb.Fatal(err)
	}
	t.outdir, t.findings = outdir, findings
	synthOnce.Store(key, t)
	return t
}

func str(v any) string { b, _ := json.Marshal(v); return string(b) }

func TestTable(t *testing.T) {
	tpl := synth(t, false)
	table := tpl.one(t, "AWS::DynamoDB::GlobalTable")
	p := table.Properties
	if got := str(p["KeySchema"]); got != `[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]` {
		t.Errorf("KeySchema = %s", got)
	}
	gsis := str(p["GlobalSecondaryIndexes"])
	for _, want := range []string{
		`{"IndexName":"GSI1","KeySchema":[{"AttributeName":"gsi1pk","KeyType":"HASH"},{"AttributeName":"gsi1sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}`,
		`{"IndexName":"GSI2","KeySchema":[{"AttributeName":"gsi2pk","KeyType":"HASH"},{"AttributeName":"gsi2sk","KeyType":"RANGE"}],"Projection":{"ProjectionType":"ALL"}}`,
	} {
		if !strings.Contains(gsis, want) {
			t.Errorf("GlobalSecondaryIndexes = %s, want %s", gsis, want)
		}
	}
	if p["BillingMode"] != "PAY_PER_REQUEST" {
		t.Errorf("BillingMode = %v", p["BillingMode"])
	}
	if got := str(p["StreamSpecification"]); got != `{"StreamViewType":"NEW_AND_OLD_IMAGES"}` {
		t.Errorf("StreamSpecification = %s, want the stream with old and new images (the feed's projector reads it)", got)
	}
	replicas := str(p["Replicas"])
	if !strings.Contains(replicas, `"PointInTimeRecoveryEnabled":true`) || !strings.Contains(replicas, `"DeletionProtectionEnabled":true`) {
		t.Errorf("Replicas = %s: want PITR and deletion protection", replicas)
	}
	if table.DeletionPolicy != "Retain" {
		t.Errorf("DeletionPolicy = %q, want Retain", table.DeletionPolicy)
	}

	throwaway := synth(t, true).one(t, "AWS::DynamoDB::GlobalTable")
	if throwaway.DeletionPolicy != "Delete" || strings.Contains(str(throwaway.Properties["Replicas"]), `"DeletionProtectionEnabled":true`) {
		t.Errorf("throwaway table: policy %q, replicas %s", throwaway.DeletionPolicy, str(throwaway.Properties["Replicas"]))
	}
}

// One resolver per route on the Lambda data source: direct on root fields and
// mutations; on child fields the JavaScript resolver, with the file's code.
func TestOneResolverPerRoute(t *testing.T) {
	tpl := synth(t, false)
	got := map[string]resource{}
	for _, r := range tpl.ofType("AWS::AppSync::Resolver") {
		got[r.Properties["TypeName"].(string)+"."+r.Properties["FieldName"].(string)] = r
	}
	table := wiredRoutes()
	if len(got) != len(table.All()) {
		t.Errorf("%d resolvers, want %d (one per route)", len(got), len(table.All()))
	}
	sources := tpl.ofType("AWS::AppSync::DataSource")
	if len(sources) != 1 {
		t.Fatalf("%d data sources, want 1", len(sources))
	}
	for _, ds := range sources {
		if ds.Properties["Type"] != "AWS_LAMBDA" {
			t.Errorf("data source type %v", ds.Properties["Type"])
		}
	}
	for _, route := range table.All() {
		r, ok := got[route.Key()]
		if !ok {
			t.Errorf("no resolver for %s", route.Key())
			continue
		}
		absent := []string{"RequestMappingTemplate", "ResponseMappingTemplate", "RequestMappingTemplateS3Location", "CodeS3Location", "PipelineConfig"}
		if code, file := appsyncjs.Child, "child.js"; route.EarlyReturn() || route.Subscribes() || route.Invalidates {
			if !route.EarlyReturn() {
				code, file = appsyncjs.Root, "root.js"
			}
			if runtime := str(r.Properties["Runtime"]); runtime != `{"Name":"APPSYNC_JS","RuntimeVersion":"1.0.0"}` {
				t.Errorf("%s runtime %s, want APPSYNC_JS 1.0.0", route.Key(), runtime)
			}
			if r.Properties["Code"] != code {
				t.Errorf("%s code is not appsyncjs/%s", route.Key(), file)
			}
		} else {
			absent = append(absent, "Code", "Runtime")
		}
		for _, key := range absent {
			if _, has := r.Properties[key]; has {
				t.Errorf("%s has %s", route.Key(), key)
			}
		}
		if kind, ok := r.Properties["Kind"]; ok && kind != "UNIT" {
			t.Errorf("%s kind %v", route.Key(), kind)
		}
		batch, _ := r.Properties["MaxBatchSize"].(float64)
		if int(batch) != route.MaxBatchSize {
			t.Errorf("%s MaxBatchSize = %v, want %d", route.Key(), r.Properties["MaxBatchSize"], route.MaxBatchSize)
		}
	}
}

func TestFunction(t *testing.T) {
	tpl := synth(t, false)
	var fn resource
	for id, r := range tpl.ofType("AWS::Lambda::Function") {
		if r.Properties["Handler"] == "bootstrap" && strings.HasPrefix(id, "Resolver") {
			fn = r
		}
	}
	p := fn.Properties
	if p == nil {
		t.Fatal("no resolver function with handler bootstrap")
	}
	if p["Runtime"] != "provided.al2023" || str(p["Architectures"]) != `["arm64"]` {
		t.Errorf("runtime %v, architectures %v", p["Runtime"], p["Architectures"])
	}
	if timeout := p["Timeout"].(float64); timeout >= 30 || p["MemorySize"].(float64) != apistack.MemoryMB {
		t.Errorf("timeout %v (must be under AppSync's 30 s), memory %v", timeout, p["MemorySize"])
	}
	if str(p["TracingConfig"]) != `{"Mode":"Active"}` {
		t.Errorf("TracingConfig = %v", p["TracingConfig"])
	}
	env := p["Environment"].(map[string]any)["Variables"].(map[string]any)
	if !strings.Contains(str(env["TABLE_NAME"]), `"Ref"`) {
		t.Errorf("TABLE_NAME = %s, want a reference to the table", str(env["TABLE_NAME"]))
	}
	if ns := env["METRICS_NAMESPACE"]; ns != "TestStack" {
		t.Errorf("METRICS_NAMESPACE = %v, want the stack's name", ns)
	}
	for _, f := range apistack.Wired {
		for name, value := range f.Environment {
			if env[name] != value {
				t.Errorf("%s = %v, want %s (a feature's)", name, env[name], value)
			}
		}
	}
	// By default nothing pins how the function reads a merged field's
	// selection.
	if reading := env["SELECTION_READING"]; reading != "" || tpl.Outputs["SelectionReading"] == nil {
		t.Errorf("SELECTION_READING = %v, output %v; want none pinned", reading, tpl.Outputs["SelectionReading"])
	}
	readsTheProbesVerdict(t, env, tpl.Outputs) // feature: probe
	// The key's secret by ARN: no value of it, resolved or not, in the configuration.
	if arn := str(env["NEXT_TOKEN_SECRET_ARN"]); !strings.Contains(arn, `"Ref"`) || strings.Contains(str(env), "resolve:secretsmanager") || env["NEXT_TOKEN_KEY"] != "" {
		t.Errorf("environment %s: want NEXT_TOKEN_SECRET_ARN referencing the secret and no key (NEXT_TOKEN_KEY only declared, empty, for SAM)", str(env))
	}
	// SAM finds the code through the asset metadata: a directory holding bootstrap.
	if fn.Metadata["aws:asset:property"] != "Code" {
		t.Errorf("asset metadata = %v", fn.Metadata)
	}
	asset, _ := fn.Metadata["aws:asset:path"].(string)
	if _, err := os.Stat(filepath.Join(tpl.outdir, asset, "bootstrap")); err != nil {
		t.Errorf("asset path %q does not hold bootstrap: %v", asset, err)
	}
	for _, g := range tpl.ofType("AWS::Logs::LogGroup") {
		if g.Properties["RetentionInDays"] == nil {
			t.Errorf("a log group without retention: %v", g.Properties)
		}
	}
}

// grants are the DynamoDB actions one function's role policies allow, by
// where: the table, its indexes, its stream.
type grants struct{ table, indexes, stream, api []string }

func TestLeastPrivilege(t *testing.T) {
	tpl := synth(t, false)
	byFunction := map[string]*grants{"Resolver": {}, "Projector": {}, "SelectionProbe": {}}
	for _, c := range wiredConsumers() {
		byFunction[c.ID] = &grants{}
	}
	var secretActions []string
	for id, pol := range tpl.ofType("AWS::IAM::Policy") {
		fn := functionOf(id)
		g := byFunction[fn]
		for _, st := range pol.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := st.(map[string]any)
			var acts []string
			switch a := s["Action"].(type) {
			case string:
				acts = []string{a}
			case []any:
				for _, x := range a {
					acts = append(acts, x.(string))
				}
			}
			for _, a := range acts {
				if strings.HasPrefix(a, "secretsmanager:") {
					secretActions = append(secretActions, a)
					if res := str(s["Resource"]); fn != "Resolver" || !strings.Contains(res, `{"Ref":"NextTokenKey`) || strings.Contains(res, "*") {
						t.Errorf("%s: %s on %s: want the resolver's, on the token key's secret only", id, a, res)
					}
				}
				if a == "appsync:GraphQL" {
					g.api = append(g.api, str(s["Resource"]))
				}
				if !strings.HasPrefix(a, "dynamodb:") {
					continue
				}
				res := str(s["Resource"])
				switch {
				case a == "dynamodb:ListStreams" && fn != "Resolver" && res == `"*"`:
					g.stream = append(g.stream, a) // it takes no resource
				case strings.Contains(res, `"*"`):
					t.Errorf("%s: %s on %s: want the table, its indexes and its stream only", id, a, res)
				case strings.Contains(res, "/index/*"):
					g.indexes = append(g.indexes, a)
				case strings.Contains(res, "StreamArn"):
					g.stream = append(g.stream, a)
				default:
					g.table = append(g.table, a)
				}
			}
		}
	}
	sorted := func(s []string) []string { s = slices.Clone(s); slices.Sort(s); return s }
	wants := map[string]grants{
		"Resolver":  {table: apistack.Actions, indexes: apistack.IndexActions},
		"Projector": {table: apistack.ProjectorConsumer(apistack.Wired).Actions, indexes: apistack.ProjectorConsumer(apistack.Wired).IndexActions, stream: streamReads}, // feature: projector
	}
	wants["SelectionProbe"] = grants{table: apistack.ProbeActions} // feature: probe
	for _, c := range wiredConsumers() {
		wants[c.ID] = grants{table: c.Actions, indexes: c.IndexActions, stream: streamReads}
	}
	for fn, want := range wants {
		got := byFunction[fn]
		if !slices.Equal(sorted(got.table), sorted(want.table)) || !slices.Equal(sorted(got.indexes), sorted(want.indexes)) || !slices.Equal(sorted(got.stream), sorted(want.stream)) {
			t.Errorf("%s's DynamoDB actions: table %v, indexes %v, stream %v; want exactly %v, %v, %v", fn,
				sorted(got.table), sorted(got.indexes), sorted(got.stream), sorted(want.table), sorted(want.indexes), sorted(want.stream))
		}
		for _, a := range got.table {
			if a == "dynamodb:*" || a == "dynamodb:Scan" {
				t.Errorf("%s: %s is granted", fn, a)
			}
		}
	}
	// The projector may call the API's fields its projections call (the
	// live feature's Mutation.invalidatePost), no other, and knows its URL;
	// the resolver calls none.
	var fields []string                        // what the projections cmd/projector wires call
	fields = append(fields, live.APIFields...) // feature: live
	calls := strings.Join(byFunction["Projector"].api, " ")
	for _, f := range fields {
		typ, field, _ := strings.Cut(f, ".")
		if !strings.Contains(calls, "/types/"+typ+"/fields/"+field) {
			t.Errorf("the projector may not call %s: it calls %s", f, calls)
		}
	}
	if n := strings.Count(calls, "/fields/"); n != len(fields) || len(byFunction["Resolver"].api) > 0 {
		t.Errorf("the projector may call %d fields (%s), want %d; the resolver %v, want none", n, calls, len(fields), byFunction["Resolver"].api)
	}
	for id, fn := range tpl.ofType("AWS::Lambda::Function") {
		env := str(fn.Properties["Environment"])
		if functionOf(id) == "Projector" && len(fields) > 0 && !strings.Contains(env, "GRAPHQL_URL") {
			t.Errorf("%s calls the API without its URL: %s", id, env)
		}
	}
	if !slices.Contains(secretActions, "secretsmanager:GetSecretValue") {
		t.Errorf("secret actions %v: the function cannot read its token key", secretActions)
	}
}

// streamReads are what an event source mapping's role reads of the stream.
var streamReads = []string{"dynamodb:DescribeStream", "dynamodb:GetRecords", "dynamodb:GetShardIterator", "dynamodb:ListStreams"}

// functionOf names the function a resource of the template belongs to by
// its logical ID: "Projector", a wired feature's consumer ("Trending") or
// "Resolver".
func functionOf(id string) string {
	fns := []string{"Projector", "SelectionProbe"}
	for _, c := range wiredConsumers() {
		fns = append(fns, c.ID)
	}
	for _, fn := range fns {
		if strings.HasPrefix(id, fn) {
			return fn
		}
	}
	return "Resolver"
}

// The stream's two consumers, the feed's projector and the trending
// aggregator (on its tumbling window), read it through event sources with
// partial batch responses, bisection, bounded retries and record age,
// their own filters, and encrypted on-failure queues of their own; the
// table's TTL expires the feed's entries and the trending buckets.
func TestStreamConsumers(t *testing.T) {
	tpl := synth(t, false)
	type consumer struct {
		batch, retries int
		filters        []map[string]any
		window         any // TumblingWindowInSeconds
	}
	want := map[string]consumer{
		"Projector": {projector.StreamBatchSize, projector.StreamRetries, apistack.ProjectorConsumer(apistack.Wired).Filters, nil}, // feature: projector
	}
	for _, c := range wiredConsumers() {
		var window any
		if c.Window > 0 {
			window = c.Window.Seconds()
		}
		want[c.ID] = consumer{c.BatchSize, c.Retries, c.Filters, window}
	}
	seen := map[string]bool{}
	for id, r := range tpl.ofType("AWS::Lambda::EventSourceMapping") {
		esm, fn := r.Properties, functionOf(id)
		w, ok := want[fn]
		if !ok || seen[fn] {
			t.Errorf("event source mapping %s: not one of the two consumers' (%v), or a second", id, slices.Collect(maps.Keys(want)))
			continue
		}
		seen[fn] = true
		if esm["StartingPosition"] != "TRIM_HORIZON" || esm["BatchSize"] != float64(w.batch) || esm["BisectBatchOnFunctionError"] != true ||
			esm["MaximumRetryAttempts"] != float64(w.retries) || esm["MaximumRecordAgeInSeconds"] != apistack.MaxRecordAge.Seconds() ||
			str(esm["FunctionResponseTypes"]) != `["ReportBatchItemFailures"]` || esm["TumblingWindowInSeconds"] != w.window {
			t.Errorf("%s's event source mapping %s", fn, str(esm))
		}
		if dest := str(esm["DestinationConfig"]); !strings.Contains(dest, fn+"Failures") {
			t.Errorf("%s on failure: %s; want its own failure queue", fn, dest)
		}
		var patterns, filters []string
		for _, f := range esm["FilterCriteria"].(map[string]any)["Filters"].([]any) {
			patterns = append(patterns, f.(map[string]any)["Pattern"].(string))
		}
		for _, f := range w.filters {
			b, _ := json.Marshal(f)
			filters = append(filters, string(b))
		}
		if !slices.Equal(patterns, filters) {
			t.Errorf("%s's filters %v, want %v", fn, patterns, filters)
		}
	}
	if len(seen) != len(want) {
		t.Errorf("event source mappings of %v, want %v", seen, slices.Collect(maps.Keys(want)))
	}
	for id, q := range tpl.ofType("AWS::SQS::Queue") {
		if q.Properties["SqsManagedSseEnabled"] != true {
			t.Errorf("the failure queue %s is not encrypted: %s", id, str(q.Properties))
		}
	}
	table := tpl.one(t, "AWS::DynamoDB::GlobalTable").Properties
	if str(table["TimeToLiveSpecification"]) != `{"AttributeName":"ttl","Enabled":true}` {
		t.Errorf("TimeToLiveSpecification %s", str(table["TimeToLiveSpecification"]))
	}
}

func TestApi(t *testing.T) {
	tpl := synth(t, false)
	api := tpl.one(t, "AWS::AppSync::GraphQLApi").Properties
	if api["AuthenticationType"] != "AMAZON_COGNITO_USER_POOLS" || !strings.Contains(str(api["AdditionalAuthenticationProviders"]), `"AuthenticationType":"API_KEY"`) {
		t.Errorf("auth = %v + %s", api["AuthenticationType"], str(api["AdditionalAuthenticationProviders"]))
	}
	if api["XrayEnabled"] != true || !strings.Contains(str(api["LogConfig"]), `"FieldLogLevel":"ERROR"`) {
		t.Errorf("xray %v, logs %s", api["XrayEnabled"], str(api["LogConfig"]))
	}
	deployed := tpl.one(t, "AWS::AppSync::GraphQLSchema").Properties["Definition"].(string)
	core, _ := os.ReadFile("../../schema/schema.graphql")
	var fragments []string
	for _, f := range apistack.Wired {
		fragments = append(fragments, f.SDL)
	}
	if sdl, err := schema.Merge(string(core), fragments...); err != nil || deployed != sdl {
		t.Errorf("the API's schema is not schema/schema.graphql with the wired features' merged into it (%v)", err)
	}
	if _, err := schema.Load(fragments...); err != nil {
		t.Errorf("the deployed schema does not load: %v", err)
	}
	tpl.one(t, "AWS::Cognito::UserPool")
	tpl.one(t, "AWS::Cognito::UserPoolClient")
	key := tpl.one(t, "AWS::AppSync::ApiKey")
	if got, _ := key.Properties["Expires"].(float64); int64(got) != keyExpires.Unix() {
		t.Errorf("API key expires %v, want %d (the date given, not now + 365 days)", key.Properties["Expires"], keyExpires.Unix())
	}
	for _, name := range []string{"GraphQLUrl", "ApiKeyId", "UserPoolId", "UserPoolClientId", "TableName"} {
		if tpl.Outputs[name] == nil {
			t.Errorf("output %s missing", name)
		}
	}
}

// TestNag runs cdk-nag's AwsSolutions and Serverless packs on the stack: every
// finding is fixed or suppressed, with its reason, in the stack.
func TestNag(t *testing.T) {
	for _, throwaway := range []bool{false, true} {
		for _, f := range synth(t, throwaway).findings {
			t.Errorf("throwaway %v: %s", throwaway, f)
		}
	}
}

// TestProductionReview checks what a deployer's review asks of the stack.
func TestProductionReview(t *testing.T) {
	tpl := synth(t, false)
	if n := len(tpl.ofType("Custom::LogRetention")); n != 0 {
		t.Errorf("%d log-retention custom resources; want every log group a resource of the stack", n)
	}
	api := tpl.one(t, "AWS::AppSync::GraphQLApi").Properties
	if api["QueryDepthLimit"] != float64(resolver.QueryDepthLimit) || api["ResolverCountLimit"] != float64(resolver.ResolverCountLimit) {
		t.Errorf("QueryDepthLimit %v, ResolverCountLimit %v; want lambda/resolver's %d and %d",
			api["QueryDepthLimit"], api["ResolverCountLimit"], resolver.QueryDepthLimit, resolver.ResolverCountLimit)
	}
	if logs := str(api["LogConfig"]); !strings.Contains(logs, `"ExcludeVerboseContent":true`) || !strings.Contains(logs, `"FieldLogLevel":"ERROR"`) {
		t.Errorf("API LogConfig = %s; want errors only, without verbose content", logs)
	}
	groups := map[string]bool{}
	for _, g := range tpl.ofType("AWS::Logs::LogGroup") {
		groups[str(g.Properties["LogGroupName"])] = g.Properties["RetentionInDays"] != nil
	}
	if !slices.ContainsFunc(slices.Collect(maps.Keys(groups)), func(n string) bool { return strings.Contains(n, "/aws/appsync/apis/") }) {
		t.Errorf("log groups %v: none for the API", groups)
	}
	for id, fn := range tpl.ofType("AWS::Lambda::Function") {
		name := functionOf(id)
		if fn.Properties["Handler"] == "bootstrap" && str(fn.Properties["LoggingConfig"]) != `{"ApplicationLogLevel":"INFO","LogFormat":"JSON","LogGroup":{"Ref":"`+logGroupRef(tpl, name)+`"},"SystemLogLevel":"WARN"}` {
			t.Errorf("%s: LoggingConfig = %s; want JSON into its own log group", id, str(fn.Properties["LoggingConfig"]))
		}
	}
	pool := tpl.one(t, "AWS::Cognito::UserPool").Properties
	if pool["MfaConfiguration"] != "OPTIONAL" || !strings.Contains(str(pool["EnabledMfas"]), "SOFTWARE_TOKEN_MFA") {
		t.Errorf("MFA %v %v; want optional TOTP", pool["MfaConfiguration"], pool["EnabledMfas"])
	}
	if p := str(pool["Policies"]); !strings.Contains(p, `"MinimumLength":12`) || !strings.Contains(p, `"RequireSymbols":true`) {
		t.Errorf("password policy %s", p)
	}
	if r := str(pool["AccountRecoverySetting"]); !strings.Contains(r, "verified_email") || strings.Contains(r, "phone") {
		t.Errorf("account recovery %s; want email only", r)
	}
	client := tpl.one(t, "AWS::Cognito::UserPoolClient").Properties
	if client["PreventUserExistenceErrors"] != "ENABLED" || strings.Contains(str(client["AllowedOAuthFlows"]), "implicit") {
		t.Errorf("client %s; want user-existence errors prevented and no implicit flow", str(client))
	}
	// cfn-lint, the linter CloudFormation users run, on the synthesized template.
	lint, err := exec.LookPath("cfn-lint")
	if err != nil {
		t.Fatal("cfn-lint is not installed: pip install cfn-lint (see the README's set-up)")
	}
	file := filepath.Join(tpl.outdir, "TestStack.template.json")
	out, err := exec.Command(lint, "--format", "parseable", file).CombinedOutput()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode()&2 != 0: // bit 2: errors (4: warnings, 8: informational)
		t.Errorf("cfn-lint found errors:\n%s", out)
	case err != nil && !errors.As(err, &exit):
		t.Fatalf("cfn-lint: %v", err)
	}
}

// logGroupRef is the logical ID of the function's log group.
// logGroupRef is the logical ID of the log group of the function named
// name ("Resolver", "Projector").
func logGroupRef(tpl template, name string) string {
	for id := range tpl.ofType("AWS::Logs::LogGroup") {
		if strings.HasPrefix(id, name+"Logs") {
			return id
		}
	}
	return ""
}

// TestSamLocalInvoke checks what make sam-invoke relies on without Docker:
// the env-vars file names only variables the function declares, the asset
// holds an executable bootstrap for the architecture the template names, and
// the logical ID docs/local.md gives is the template's.
func TestSamLocalInvoke(t *testing.T) {
	for _, arch := range []string{"arm64", "x86_64"} {
		t.Run(arch, func(t *testing.T) { samLocalInvoke(t, arch) })
	}
}

func samLocalInvoke(t *testing.T, arch string) {
	tpl := synthFor(t, false, arch)
	for id, fn := range tpl.ofType("AWS::Lambda::Function") {
		if got := str(fn.Properties["Architectures"]); got != `["`+arch+`"]` {
			t.Errorf("%s: architectures %s, want [%q]", id, got, arch)
		}
	}
	raw, err := os.ReadFile(filepath.Join(tpl.outdir, "TestStack.template.json"))
	if err != nil {
		t.Fatal(err)
	}
	fn, err := samenv.Find(raw)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := samenv.EnvVars(fn, samenv.Local("http://127.0.0.1:8000", "t")); err != nil {
		t.Error(err)
	}
	exe, err := elf.Open(filepath.Join(tpl.outdir, fn.AssetPath, "bootstrap"))
	if err != nil {
		t.Fatalf("the asset's bootstrap: %v", err)
	}
	defer exe.Close()
	want := map[string]elf.Machine{"arm64": elf.EM_AARCH64, "x86_64": elf.EM_X86_64}[fn.Architecture]
	if exe.Machine != want || exe.Type != elf.ET_EXEC {
		t.Errorf("bootstrap is %v %v; the template names %s", exe.Type, exe.Machine, fn.Architecture)
	}
	doc, _ := os.ReadFile("../../docs/local.md")
	if !strings.Contains(string(doc), fn.LogicalID) {
		t.Errorf("docs/local.md does not name the function's logical ID %s", fn.LogicalID)
	}
}

// The API behind a WAF web ACL (a rate-based rule per client IP, then AWS's
// managed rule groups), associated with the API; a dashboard drawing every
// metric the functions' cost lines emit, by its own name and namespace;
// alarms on the resolver's errors and throttles and the projector's
// on-failure queue.
func TestTheAPIIsDefendedAndWatched(t *testing.T) {
	tpl := synth(t, false)
	acl := tpl.one(t, "AWS::WAFv2::WebACL").Properties
	rules := str(acl["Rules"])
	if acl["Scope"] != "REGIONAL" || !strings.Contains(rules, fmt.Sprintf(`"RateBasedStatement":{"AggregateKeyType":"IP","Limit":%d}`, apistack.RateLimitPer5Min)) ||
		!strings.Contains(rules, `"Action":{"Block":{}}`) {
		t.Errorf("web ACL scope %v, rules %s; want a regional ACL blocking past %d requests per IP", acl["Scope"], rules, apistack.RateLimitPer5Min)
	}
	for _, group := range apistack.ManagedRuleGroups {
		if !strings.Contains(rules, `"ManagedRuleGroupStatement":{"Name":"`+group+`","VendorName":"AWS"}`) {
			t.Errorf("the web ACL does not apply %s: %s", group, rules)
		}
	}
	var apiID string
	for id := range tpl.ofType("AWS::AppSync::GraphQLApi") {
		apiID = id
	}
	assoc := tpl.one(t, "AWS::WAFv2::WebACLAssociation").Properties
	if got := str(assoc["ResourceArn"]); !strings.Contains(got, apiID) || !strings.Contains(str(assoc["WebACLArn"]), "ApiFirewall") {
		t.Errorf("the web ACL is associated with %s (web ACL %s), want the API %s", got, str(assoc["WebACLArn"]), apiID)
	}

	body := str(tpl.one(t, "AWS::CloudWatch::Dashboard").Properties["DashboardBody"])
	// What AppSync measures: its latency and requests, and its enhanced
	// metrics by resolver and by operation, turned on; and the reading the
	// function's environments serve.
	api := tpl.one(t, "AWS::AppSync::GraphQLApi").Properties
	if got := str(api["EnhancedMetricsConfig"]); got != `{"DataSourceLevelMetricsBehavior":"FULL_REQUEST_DATA_SOURCE_METRICS","OperationLevelMetricsConfig":"ENABLED","ResolverLevelMetricsBehavior":"FULL_REQUEST_RESOLVER_METRICS"}` {
		t.Errorf("EnhancedMetricsConfig %s; want every resolver, data source and operation measured", got)
	}
	for _, want := range []string{`\"AWS/AppSync\",\"Latency\",\"GraphQLAPIId\"`, `{AWS/AppSync,GraphQLAPIId,Resolver} MetricName=\\\"Latency\\\"`,
		`{AWS/AppSync,GraphQLAPIId,Operation} MetricName=\\\"Latency\\\"`, `filter msg = \\\"selection reading\\\"`, `\"AWS/AppSync\",\"5XXError\"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the dashboard has no %s", want)
		}
	}
	for _, m := range resolver.Metrics {
		if want := fmt.Sprintf(`MetricName=\\\"%s\\\"`, m.Name); !strings.Contains(body, want) || !strings.Contains(body, resolver.MetricsDimension) {
			t.Errorf("the dashboard draws no resolver metric %s (%s)", m.Name, want)
		}
	}
	drawsTheProjectorsMetrics(t, body) // feature: projector
	for _, lambdaMetric := range []string{"Invocations", "Errors", "Throttles", "Duration", "IteratorAge", "ApproximateNumberOfMessagesVisible"} {
		if !strings.Contains(body, `\"`+lambdaMetric+`\"`) {
			t.Errorf("the dashboard draws no %s", lambdaMetric)
		}
	}
	for id := range tpl.ofType("AWS::Lambda::Function") {
		if fn := functionOf(id); fn != "Resolver" && fn != "SelectionProbe" && !strings.Contains(body, fn+" lag (IteratorAge, max)") {
			t.Errorf("the dashboard draws no iterator age of the %s consumer", fn)
		}
	}
	gaveUp := 0
	alarms := map[string]bool{}
	for id, a := range tpl.ofType("AWS::CloudWatch::Alarm") {
		if strings.HasSuffix(strings.TrimRight(id, "0123456789ABCDEF"), "GaveUp") {
			gaveUp++
		}
		alarms[fmt.Sprint(a.Properties["Namespace"], "/", a.Properties["MetricName"])] = true
	}
	for _, want := range []string{"AWS/Lambda/Errors", "AWS/Lambda/Throttles", "AWS/SQS/ApproximateNumberOfMessagesVisible"} {
		if !alarms[want] {
			t.Errorf("no alarm on %s; alarms: %v", want, alarms)
		}
	}
	if gaveUp != 2 {
		t.Errorf("%d alarms on a consumer's on-failure queue, want the projector's and the aggregator's", gaveUp)
	}
}

// wiredRoutes are the routed fields of the core and of the features the
// stack wires in.
func wiredRoutes() *resolver.Routes {
	var rs [][]resolver.Route
	for _, f := range apistack.Wired {
		rs = append(rs, f.Routes)
	}
	return resolver.NewRoutes(rs...)
}

// wiredConsumers are the wired features' consumers of the stream.
func wiredConsumers() []apistack.Consumer {
	var cs []apistack.Consumer
	for _, f := range apistack.Wired {
		if f.Consumer != nil {
			cs = append(cs, *f.Consumer)
		}
	}
	return cs
}
