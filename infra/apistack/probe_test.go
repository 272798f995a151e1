package apistack_test // feature: probe

import (
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/probe"
)

// The deployment's selection probe: a custom resource run by its own
// function once the API, every resolver and the resolver function exist,
// with what it needs and nothing more (its post's partition, the fields the
// probes read as an IAM caller, its one parameter), handing the verdict to
// the resolver function through that parameter.
func TestTheDeploymentProbesTheSelectionReading(t *testing.T) {
	tpl := synth(t, false)
	var run resource
	for _, r := range tpl.Resources {
		if r.Type == "Custom::SelectionProbe" {
			run = r
		}
	}
	if run.Properties == nil {
		t.Fatal("no Custom::SelectionProbe resource")
	}
	if !strings.Contains(str(run.Properties["ServiceToken"]), "SelectionProbe") || run.Properties["Parameter"] != "/TestStack/selection-reading" ||
		run.Properties["Pinned"] != "" || !strings.Contains(str(run.Properties["GraphQLUrl"]), "GraphQLUrl") || len(str(run.Properties["Inputs"])) != 18 {
		t.Errorf("the probe's properties %s", str(run.Properties))
	}
	after := map[string]bool{}
	for _, id := range run.DependsOn {
		after[id] = true
	}
	for id, r := range tpl.Resources {
		switch {
		case r.Type == "AWS::AppSync::Resolver", r.Type == "AWS::AppSync::GraphQLSchema", r.Type == "AWS::AppSync::DataSource",
			r.Type == "AWS::Lambda::Function" && strings.HasPrefix(id, "Resolver"):
			if !after[id] {
				t.Errorf("the probe does not run after %s (%s)", id, r.Type)
			}
		}
	}
	api := tpl.one(t, "AWS::AppSync::GraphQLApi").Properties
	if !strings.Contains(str(api["AdditionalAuthenticationProviders"]), `"AWS_IAM"`) {
		t.Errorf("the API's additional modes %s: no IAM for the probe", str(api["AdditionalAuthenticationProviders"]))
	}
	var graphql, ssm []string
	for id, pol := range tpl.ofType("AWS::IAM::Policy") {
		fn := functionOf(id)
		for _, st := range pol.Properties["PolicyDocument"].(map[string]any)["Statement"].([]any) {
			s := st.(map[string]any)
			acts, res := str(s["Action"]), str(s["Resource"])
			switch {
			case strings.Contains(acts, "appsync:GraphQL") && fn == "Projector":
				// its projections' calls: TestLeastPrivilege
			case strings.Contains(acts, "appsync:GraphQL"):
				if fn != "SelectionProbe" {
					t.Errorf("%s may call the API as an IAM caller", fn)
				}
				for _, r := range s["Resource"].([]any) {
					graphql = append(graphql, str(r))
				}
			case strings.Contains(acts, "ssm:"):
				ssm = append(ssm, fn+" "+acts)
				if !strings.Contains(res, "parameter/") || !strings.Contains(res, "/selection-reading") || strings.Contains(res, "*") {
					t.Errorf("%s: %s on %s; want the one parameter", fn, acts, res)
				}
			case fn == "SelectionProbe" && strings.Contains(acts, "dynamodb:"):
				if cond := str(s["Condition"]); cond != `{"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":["POST#`+probe.Post.ID+`"]}}` {
					t.Errorf("the probe's %s with condition %s; want its post's partition only", acts, cond)
				}
			}
		}
	}
	if len(graphql) != len(probe.Fields()) {
		t.Errorf("the probe may read %d fields, want exactly probe.Fields' %d: %v", len(graphql), len(probe.Fields()), graphql)
	}
	for _, f := range probe.Fields() {
		typ, field, _ := strings.Cut(f, ".")
		if !slices.ContainsFunc(graphql, func(r string) bool { return strings.Contains(r, `/types/`+typ+`/fields/`+field+`"`) }) {
			t.Errorf("the probe may not read %s: %v", f, graphql)
		}
	}
	slices.Sort(ssm)
	if want := []string{`Resolver "ssm:GetParameter"`, `SelectionProbe ["ssm:DeleteParameter","ssm:PutParameter"]`}; !slices.Equal(ssm, want) {
		t.Errorf("parameter grants %v, want %v", ssm, want)
	}
	// Daily, again, with the resource's properties, and an alarm on its failures.
	rule := tpl.one(t, "AWS::Events::Rule").Properties
	targets := str(rule["Targets"])
	if rule["ScheduleExpression"] != "rate(1 day)" || !strings.Contains(targets, "SelectionProbe") ||
		!strings.Contains(targets, `ResourceProperties`) || !strings.Contains(targets, `/TestStack/selection-reading`) {
		t.Errorf("the daily rule %s", str(rule))
	}
	found := false
	for _, a := range tpl.ofType("AWS::CloudWatch::Alarm") {
		if a.Properties["MetricName"] == probe.FailureMetric && a.Properties["Namespace"] == "TestStack" && a.Properties["Period"] == float64(86400) &&
			strings.Contains(str(a.Properties["Dimensions"]), probe.MetricFunction) {
			found = true
		}
	}
	if !found {
		t.Errorf("no alarm on the daily probe's %s", probe.FailureMetric)
	}
}

// readsTheProbesVerdict fails unless the function, pinned to no reading,
// reads the deployment's probe's verdict from its parameter
// (first-occurrence, right however AppSync writes it, until then).
func readsTheProbesVerdict(t *testing.T, env map[string]any, outputs map[string]any) {
	t.Helper()
	reading, _ := outputs["SelectionReading"].(map[string]any)
	if reading["Value"] != "probed" || env["SELECTION_READING_PARAMETER"] != "/TestStack/selection-reading" {
		t.Errorf("SELECTION_READING_PARAMETER = %v, output %v; want the probe's parameter", env["SELECTION_READING_PARAMETER"], reading)
	}
}
