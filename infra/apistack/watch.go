package apistack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsappsync"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awswafv2"
	"github.com/aws/jsii-runtime-go"

	"github.com/example/appsync-dynamo/lambda/resolver"
)

// RateLimitPer5Min is the requests one client IP may send the API in five
// minutes (WAF's rate-based rule, over its default window) before WAF
// blocks it until its rate falls: 3,000 is 10 a second, far above a reader
// and below what one machine can send.
const RateLimitPer5Min = 3000

// ManagedRuleGroups are AWS's managed rule groups the web ACL applies, in
// order: common exploits, inputs known to be bad, and IP addresses with a
// bad reputation.
var ManagedRuleGroups = []string{"AWSManagedRulesCommonRuleSet", "AWSManagedRulesKnownBadInputsRuleSet", "AWSManagedRulesAmazonIpReputationList"}

// defend puts a WAF web ACL in front of the API: a rate-based rule per
// client IP, then AWS's managed rule groups.
func defend(stack awscdk.Stack, api awsappsync.GraphqlApi) {
	visibility := func(name string) *awswafv2.CfnWebACL_VisibilityConfigProperty {
		return &awswafv2.CfnWebACL_VisibilityConfigProperty{CloudWatchMetricsEnabled: jsii.Bool(true), MetricName: jsii.String(name), SampledRequestsEnabled: jsii.Bool(true)}
	}
	rules := []any{&awswafv2.CfnWebACL_RuleProperty{
		Name: jsii.String("RatePerIP"), Priority: jsii.Number(0),
		Action:           &awswafv2.CfnWebACL_RuleActionProperty{Block: &awswafv2.CfnWebACL_BlockActionProperty{}},
		Statement:        &awswafv2.CfnWebACL_StatementProperty{RateBasedStatement: &awswafv2.CfnWebACL_RateBasedStatementProperty{Limit: jsii.Number(RateLimitPer5Min), AggregateKeyType: jsii.String("IP")}},
		VisibilityConfig: visibility("RatePerIP"),
	}}
	for i, group := range ManagedRuleGroups {
		rules = append(rules, &awswafv2.CfnWebACL_RuleProperty{
			Name: jsii.String(group), Priority: jsii.Number(float64(i + 1)),
			OverrideAction:   &awswafv2.CfnWebACL_OverrideActionProperty{None: map[string]any{}},
			Statement:        &awswafv2.CfnWebACL_StatementProperty{ManagedRuleGroupStatement: &awswafv2.CfnWebACL_ManagedRuleGroupStatementProperty{VendorName: jsii.String("AWS"), Name: jsii.String(group)}},
			VisibilityConfig: visibility(group),
		})
	}
	acl := awswafv2.NewCfnWebACL(stack, jsii.String("ApiFirewall"), &awswafv2.CfnWebACLProps{
		Scope:            jsii.String("REGIONAL"),
		DefaultAction:    &awswafv2.CfnWebACL_DefaultActionProperty{Allow: &awswafv2.CfnWebACL_AllowActionProperty{}},
		VisibilityConfig: visibility("ApiFirewall"),
		Rules:            &rules,
	})
	awswafv2.NewCfnWebACLAssociation(stack, jsii.String("ApiFirewallAssociation"), &awswafv2.CfnWebACLAssociationProps{
		ResourceArn: api.Arn(), WebAclArn: acl.AttrArn(),
	})
}

// consumerWatch is a stream consumer's function and on-failure queue.
type consumerWatch struct {
	Consumer
	fn     awslambda.Function
	failed awssqs.Queue
}

// watch adds the stack's dashboard, built from what AppSync measures (its
// latency and requests, and its enhanced metrics by resolver and by named
// operation), the metrics the functions emit in their cost lines
// (resolver.Metrics by field, the projector's), Lambda's own, and the
// selection reading each execution environment serves (its log line); and
// its alarms: the resolver's errors and throttles, and anything in a stream
// consumer's on-failure queue.
func watch(stack awscdk.Stack, api awsappsync.GraphqlApi, fn awslambda.Function, consumers []consumerWatch) {
	period := awscdk.Duration_Minutes(jsii.Number(1))
	byField := func(name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', '%s', 60)`, *stack.StackName(), resolver.MetricsDimension, name, stat)),
			Label:      jsii.String(name), Period: period,
		})
	}
	graph := func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Left: &metrics, Width: jsii.Number(8), Height: jsii.Number(6)})
	}
	var costs []awscloudwatch.IWidget
	for _, m := range resolver.Metrics {
		stat := "Sum"
		if m.Name == "Duration" || m.Name == "BatchSize" {
			stat = "p99"
		}
		costs = append(costs, graph("Resolver "+m.Name+" by field ("+stat+")", byField(m.Name, stat)))
	}
	var feeds []awscloudwatch.IWidget
	feeds = append(feeds, projectorGraphs(period, graph)...) // feature: projector
	lambdaWidgets := []awscloudwatch.IWidget{
		graph("Resolver invocations, errors, throttles", fn.MetricInvocations(nil), fn.MetricErrors(nil), fn.MetricThrottles(nil)),
		graph("Resolver duration (p99)", fn.MetricDuration(&awscloudwatch.MetricOptions{Statistic: jsii.String("p99")})),
	}
	for _, c := range consumers {
		iteratorAge := c.fn.Metric(jsii.String("IteratorAge"), &awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: period})
		lambdaWidgets = append(lambdaWidgets,
			graph(c.ID+" lag (IteratorAge, max) and errors", iteratorAge, c.fn.MetricErrors(nil)),
			graph(c.ID+" records given up on (on-failure queue)", c.failed.MetricApproximateNumberOfMessagesVisible(nil)))
	}
	dash := awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName: jsii.String(*stack.StackName() + "-cost"),
	})
	dash.AddWidgets(appsyncWidgets(api, fn, graph)...)
	dash.AddWidgets(lambdaWidgets...)
	dash.AddWidgets(costs...)
	dash.AddWidgets(feeds...)

	alarm := func(id, description string, metric awscloudwatch.IMetric) {
		awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
			AlarmDescription: jsii.String(description), Metric: metric, Threshold: jsii.Number(1), EvaluationPeriods: jsii.Number(1),
			ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD, TreatMissingData: awscloudwatch.TreatMissingData_NOT_BREACHING,
		})
	}
	five := awscdk.Duration_Minutes(jsii.Number(5))
	alarm("ResolverErrors", "the resolver function failed (an invocation error, not a field's GraphQL error)", fn.MetricErrors(&awscloudwatch.MetricOptions{Period: five}))
	alarm("ResolverThrottles", "Lambda throttled the resolver function: AppSync's fields fail", fn.MetricThrottles(&awscloudwatch.MetricOptions{Period: five}))
	for _, c := range consumers {
		alarm(c.ID+"GaveUp", c.GaveUp,
			c.failed.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Maximum")}))
	}
}

// appsyncWidgets draw what AppSync measures of the API (its latency, from
// request to response, and its requests and errors), its enhanced metrics
// by resolver and by named operation (SEARCH over the API's own), and the
// selection reading the resolver function's environments serve.
func appsyncWidgets(api awsappsync.GraphqlApi, fn awslambda.Function, graph func(string, ...awscloudwatch.IMetric) awscloudwatch.IWidget) []awscloudwatch.IWidget {
	period := awscdk.Duration_Minutes(jsii.Number(1))
	apiMetric := func(name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String("AWS/AppSync"), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{"GraphQLAPIId": api.ApiId()}, Statistic: jsii.String(stat), Period: period})
	}
	by := func(dimension, name, stat string) awscloudwatch.IMetric {
		return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf(`SEARCH('{AWS/AppSync,GraphQLAPIId,%s} MetricName="%s" GraphQLAPIId="%s"', '%s', 60)`, dimension, name, *api.ApiId(), stat)),
			Label:      jsii.String(name), Period: period,
		})
	}
	reading := awscloudwatch.NewLogQueryWidget(&awscloudwatch.LogQueryWidgetProps{
		Title: jsii.String("Selection reading served, by execution environment"), LogGroupNames: jsii.Strings(*fn.LogGroup().LogGroupName()),
		QueryLines: jsii.Strings(`filter msg = "selection reading"`, "stats count(*) as environments by reading, source"),
		View:       awscloudwatch.LogQueryVisualizationType_TABLE, Width: jsii.Number(8), Height: jsii.Number(6),
	})
	return []awscloudwatch.IWidget{
		graph("AppSync latency (p50, p99)", apiMetric("Latency", "p50"), apiMetric("Latency", "p99")),
		graph("AppSync requests, 4XX, 5XX (Sum)", apiMetric("Requests", "Sum"), apiMetric("4XXError", "Sum"), apiMetric("5XXError", "Sum")),
		reading,
		graph("AppSync latency by resolver (p99)", by("Resolver", "Latency", "p99")),
		graph("AppSync latency by operation (p99)", by("Operation", "Latency", "p99")),
		graph("AppSync requests by operation (Sum)", by("Operation", "Requests", "Sum")),
	}
}
