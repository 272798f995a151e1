// Package projector is the Lambda function of the table's stream: the batch
// to its batch steps (hot keys' tallies), then each record to the
// projections wired in, reporting the first record not applied. A
// projection's writes must be idempotent: records come again, and late.
package projector

import (
	"context"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/cost"
)

// Batch applies a whole batch before the projections: it returns the index
// of the first record it could not apply (len(records) for none) and why;
// that record and those after it go to no projection.
type Batch interface {
	ApplyBatch(ctx context.Context, records []events.DynamoDBEventRecord) (int, error)
}

// A Projection applies the stream's records it is for (its filters, which
// the event source's include) and ignores the others. Apply's writes must
// be idempotent: a record may come again, and after later ones.
type Projection interface {
	Apply(ctx context.Context, r events.DynamoDBEventRecord) error
}

// Projector applies stream records: its batches' steps, then its
// projections.
type Projector struct {
	log         *slog.Logger
	batches     []Batch
	projections []Projection
}

// New returns a projector handing each batch to batches, in order, then
// each record they all applied to the projections, in order.
func New(log *slog.Logger, batches []Batch, projections ...Projection) *Projector {
	return &Projector{log: log, batches: batches, projections: projections}
}

// reserve is the time Handle keeps before its deadline: it starts no record
// later than that, and reports the rest as not applied.
const reserve = 500 * time.Millisecond

// Handle applies the records in order and reports (batchItemFailures) the
// first one it could not apply or reach before its deadline: Lambda sends it
// and every one after it again. Each invocation logs one cost line.
func (p *Projector) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	ctx, meter := cost.WithMeter(ctx)
	applied := 0
	defer func() { p.logCost(len(ev.Records), applied, meter.Summary(), time.Since(start)) }()
	deadline, hasDeadline := ctx.Deadline()
	failAt := len(ev.Records)
	for _, b := range p.batches {
		n, err := b.ApplyBatch(ctx, ev.Records)
		if err != nil {
			p.log.Error("batch not applied", "cause", err.Error())
		}
		failAt = min(failAt, n)
	}
	for _, r := range ev.Records[:failAt] {
		if hasDeadline && time.Until(deadline) < reserve {
			p.log.Warn("stopping before the deadline", "unapplied", r.Change.SequenceNumber)
			return failedFrom(r), nil
		}
		if err := p.apply(ctx, r); err != nil {
			p.log.Error("record not applied", "sequenceNumber", r.Change.SequenceNumber, "eventName", r.EventName, "cause", err.Error())
			return failedFrom(r), nil
		}
		applied++
	}
	if failAt < len(ev.Records) {
		return failedFrom(ev.Records[failAt]), nil
	}
	return events.DynamoDBEventResponse{}, nil
}

// MetricsNamespace is the CloudWatch namespace of the projector's cost
// metrics, whose one dimension is MetricsDimension ("projector").
const (
	MetricsNamespace = "AppSyncDynamoFeed"
	MetricsDimension = "Function"
)

// Metrics are the metrics of each invocation's cost line, by name, with
// their unit: the stack's dashboard draws them.
var Metrics = []struct{ Name, Unit string }{
	{"Records", "Count"}, {"Applied", "Count"},
	{"DynamoDBRequests", "Count"}, {"WriteCapacityUnits", "Count"},
	{"ReadCapacityUnits", "Count"}, {"Duration", "Milliseconds"},
}

// logCost writes the invocation's cost as one log line in CloudWatch
// Embedded Metric Format: the records sent and applied, the DynamoDB
// requests by operation, the capacity units and the duration.
func (p *Projector) logCost(records, applied int, sum cost.Summary, took time.Duration) {
	metrics := make([]map[string]string, len(Metrics))
	for i, m := range Metrics {
		metrics[i] = map[string]string{"Name": m.Name, "Unit": m.Unit}
	}
	requests := 0
	for _, n := range sum.Requests {
		requests += n
	}
	p.log.Info("invocation",
		slog.Any("_aws", map[string]any{"Timestamp": time.Now().UnixMilli(), "CloudWatchMetrics": []map[string]any{{
			"Namespace": MetricsNamespace, "Dimensions": [][]string{{MetricsDimension}}, "Metrics": metrics,
		}}}),
		MetricsDimension, "projector", "Records", records, "Applied", applied, "DynamoDBRequests", requests,
		"Requests", sum.Requests, "WriteCapacityUnits", sum.Write, "ReadCapacityUnits", sum.Read,
		"Duration", float64(took.Microseconds())/1000)
}

func failedFrom(r events.DynamoDBEventRecord) events.DynamoDBEventResponse {
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}
}

// apply applies one record: each projection in turn.
func (p *Projector) apply(ctx context.Context, r events.DynamoDBEventRecord) error {
	for _, pr := range p.projections {
		if err := pr.Apply(ctx, r); err != nil {
			return err
		}
	}
	return nil
}
