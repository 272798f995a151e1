// Package projector is the Lambda function of the table's stream: it
// copies hot posts' and users' shard counts onto their counters (tallies,
// one write per post or user a batch), then hands each record to the
// projections wired in (lambda/feed keeps the readers' feeds), in order,
// reporting the first record not applied (partial batch responses).
//
// A projection's writes must be idempotent and converge: a record may come
// again (a retried batch), and after records that came later.
package projector

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
)

// TableActions are the DynamoDB operations the projector itself performs
// on the table (the tallies: UpdateItem); the stack grants them with its
// projections' (a feature's TableActions and IndexActions).
var TableActions = []string{"dynamodb:UpdateItem"}

// Store is what the projector needs of the table: the shards' tallies
// copied onto their parent's counter.
type Store interface {
	ApplyTallies(ctx context.Context, parent string, tallies map[int]store.ShardTally) error
}

// A Projection applies the stream's records it is for (its filters, which
// the event source's include) and ignores the others. Apply's writes must
// be idempotent: a record may come again, and after later ones.
type Projection interface {
	Apply(ctx context.Context, r events.DynamoDBEventRecord) error
}

// Projector applies stream records: the tallies, then its projections.
type Projector struct {
	store       Store
	log         *slog.Logger
	projections []Projection
}

// New returns a projector copying tallies to s and applying each record to
// the projections, in order.
func New(s Store, log *slog.Logger, projections ...Projection) *Projector {
	return &Projector{store: s, log: log, projections: projections}
}

// reserve is the time Handle keeps before its deadline: it starts no record
// later than that, and reports the rest as not applied.
const reserve = 500 * time.Millisecond

// Handle applies the records in order. It reports (batchItemFailures) the
// sequence number of the first record it could not apply, or did not reach
// before its deadline: Lambda sends that record and every one after it
// again, and the records before it are done.
//
// Each invocation ends with one cost line (see logCost).
func (p *Projector) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	ctx, meter := cost.WithMeter(ctx)
	applied := 0
	defer func() { p.logCost(len(ev.Records), applied, meter.Summary(), time.Since(start)) }()
	deadline, hasDeadline := ctx.Deadline()
	// Hot posts' and users' shard counts first, one write per post or user
	// for the whole batch (a record each would put a write unit per like
	// or follow on its partition): a failure is reported at its first
	// record.
	failAt := len(ev.Records)
	tallies, first := tallies(ev.Records)
	for _, parent := range slices.Sorted(maps.Keys(tallies)) {
		if err := p.store.ApplyTallies(ctx, parent, tallies[parent]); err != nil {
			p.log.Error("shard counts not applied", "parent", parent, "cause", err.Error())
			failAt = min(failAt, first[parent])
		}
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

// tallies reads the batch's records of shard counters: by the partition of
// their hot post or user, each shard's latest counts (the highest
// version), and the index of its first such record.
func tallies(records []events.DynamoDBEventRecord) (map[string]map[int]store.ShardTally, map[string]int) {
	out, first := map[string]map[int]store.ShardTally{}, map[string]int{}
	for i, r := range records {
		img := r.Change.NewImage
		if str(r.Change.Keys, "sk") != store.SKShard || img == nil {
			continue // not a shard counter, or its deletion (with its post)
		}
		parent, ok := store.ShardParent(str(r.Change.Keys, "pk"))
		shard, ok1 := num(img, "shard")
		version, ok2 := num(img, "version")
		if !ok || !ok1 || !ok2 {
			continue
		}
		likes, _ := num(img, "likeCount")
		comments, _ := num(img, "commentCount")
		followers, _ := num(img, "followerCount")
		if out[parent] == nil {
			out[parent], first[parent] = map[int]store.ShardTally{}, i
		}
		if t, seen := out[parent][int(shard)]; !seen || t.Version < version {
			out[parent][int(shard)] = store.ShardTally{Likes: int(likes), Comments: int(comments), Followers: int(followers), Version: version}
		}
	}
	return out, first
}

func num(img map[string]events.DynamoDBAttributeValue, name string) (int64, bool) {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeNumber {
		return 0, false
	}
	n, err := v.Integer()
	return n, err == nil
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

func str(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}
