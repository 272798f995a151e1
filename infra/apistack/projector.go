package apistack // feature: projector

import (
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/jsii-runtime-go"

	"github.com/example/appsync-dynamo/lambda/projector"
)

// The projector (lambda/cmd/projector): the function the stream features
// share, its consumer of the table's stream and its graphs.

// ProjectorConsumer is the projector (lambda/cmd/projector, its default
// projection): the features' projections and batch steps (the feed's, the
// hot keys' tallies), their filters in order, its role theirs. With a
// feature's own consumer, the stream has at most two consumers, the most a
// DynamoDB stream's shard should have.
func ProjectorConsumer(features []Feature) Consumer {
	c := Consumer{ID: "Projector", Description: "Keeps the readers' feeds from the table's stream", Projection: "feed",
		BatchSize: projector.StreamBatchSize, Retries: projector.StreamRetries,
		GaveUp: "the projector gave up on stream records: they are in its on-failure queue, and what it projects misses them (feed entries, pushes to connected readers, ended subscriptions)"}
	for _, f := range features {
		if f.Projected != nil {
			c.Filters = append(c.Filters, f.Projected.Filters...)
			c.Actions = append(c.Actions, f.Projected.Actions...)
			c.IndexActions = append(c.IndexActions, f.Projected.IndexActions...)
			c.APIFields = append(c.APIFields, f.Projected.APIFields...)
		}
	}
	slices.Sort(c.Actions)
	slices.Sort(c.IndexActions)
	c.Actions, c.IndexActions = slices.Compact(c.Actions), slices.Compact(c.IndexActions)
	c.Filters = distinct(c.Filters) // two features may project the same records (a post's own item)
	return c
}

// projector is the projector's consumer, when a feature has it project
// something (none reads the stream for nothing).
func (p *Props) projector() []Consumer {
	if c := ProjectorConsumer(p.Features); len(c.Filters) > 0 {
		return []Consumer{c}
	}
	return nil
}

// projectorGraphs are the dashboard's graphs of the projector's cost lines
// (projector.Metrics), each drawn by graph over period.
func projectorGraphs(period awscdk.Duration, graph func(title string, metrics ...awscloudwatch.IMetric) awscloudwatch.IWidget) []awscloudwatch.IWidget {
	var graphs []awscloudwatch.IWidget
	for _, m := range projector.Metrics {
		stat := "Sum"
		if m.Name == "Duration" {
			stat = "p99"
		}
		metric := awscloudwatch.NewMetric(&awscloudwatch.MetricProps{Namespace: jsii.String(projector.MetricsNamespace), MetricName: jsii.String(m.Name),
			DimensionsMap: &map[string]*string{projector.MetricsDimension: jsii.String("projector")}, Statistic: jsii.String(stat), Period: period})
		graphs = append(graphs, graph("Projector "+m.Name+" ("+stat+")", metric))
	}
	return graphs
}
