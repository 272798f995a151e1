package resolver

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// DefaultMetricsNamespace is the CloudWatch namespace of the per-invocation
// metrics when none is given (the stack gives its own name).
const DefaultMetricsNamespace = "AppSyncDynamo"

// Metrics are the metrics of each invocation's cost line, by name, with
// their unit, under the dimension MetricsDimension (the field resolved):
// the stack's dashboard draws them.
var Metrics = []struct{ Name, Unit string }{
	{"BatchSize", "Count"},
	{"DynamoDBRequests", "Count"},
	{"ReadCapacityUnits", "Count"},
	{"WriteCapacityUnits", "Count"},
	{"Duration", "Milliseconds"},
}

// MetricsDimension is the cost metrics' one dimension.
const MetricsDimension = "Field"

// emfMetrics declares which keys of the log line are metrics, in namespace.
func emfMetrics(namespace string) json.RawMessage {
	metrics := make([]map[string]string, len(Metrics))
	for i, m := range Metrics {
		metrics[i] = map[string]string{"Name": m.Name, "Unit": m.Unit}
	}
	b, _ := payload.Marshal([]map[string]any{{
		"Namespace":  namespace,
		"Dimensions": [][]string{{MetricsDimension}},
		"Metrics":    metrics,
	}})
	return b
}

// unknownField is the Field dimension of a payload that names no field (a
// malformed event): a dimension is never empty.
const unknownField = "(unknown)"

// logCost writes the invocation's cost as one line in CloudWatch Embedded
// Metric Format, with the request ID and whether it was a cold start, in
// the shape of a slog.JSONHandler line (msg "invocation").
func (h *Handler) logCost(ctx context.Context, field string, batch int, sum cost.Summary, took time.Duration) {
	if field == "" || field == "." {
		field = unknownField
	}
	requestID := ""
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		requestID = lc.AwsRequestID
	}
	now := time.Now()
	b := make([]byte, 0, 256+len(h.metrics)+len(field)+len(requestID))
	b = append(b, `{"time":"`...)
	b = append(now.AppendFormat(b, time.RFC3339Nano), `","level":"INFO","msg":"invocation","_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, now.UnixMilli(), 10)
	b = append(append(append(b, `,"CloudWatchMetrics":`...), h.metrics...), `},"RequestId":`...)
	b = payload.AppendString(b, requestID)
	b = strconv.AppendBool(append(b, `,"ColdStart":`...), !h.invoked.Swap(true))
	b = payload.AppendString(append(b, `,"Field":`...), field)
	b = strconv.AppendInt(append(b, `,"BatchSize":`...), int64(batch), 10)
	requests := 0
	for _, n := range sum.Requests {
		requests += n
	}
	b = strconv.AppendInt(append(b, `,"DynamoDBRequests":`...), int64(requests), 10)
	b = append(b, `,"Requests":{`...)
	for i, op := range slices.Sorted(maps.Keys(sum.Requests)) {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(append(payload.AppendString(b, op), ':'), int64(sum.Requests[op]), 10)
	}
	b = appendFloat(append(b, `},"ReadCapacityUnits":`...), sum.Read)
	b = appendFloat(append(b, `,"WriteCapacityUnits":`...), sum.Write)
	b = appendFloat(append(b, `,"Duration":`...), float64(took.Microseconds())/1000)
	h.costs.Write(append(b, "}\n"...))
}

// appendFloat appends f as encoding/json writes a float64 (the metrics are
// never NaN or infinite).
func appendFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := max(f, -f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' { // e-07 -> e-7, as encoding/json writes it
		if m := len(b) - n; m >= 4 && b[len(b)-4] == 'e' && b[len(b)-3] == '-' && b[len(b)-2] == '0' {
			b[len(b)-2] = b[len(b)-1]
			b = b[:len(b)-1]
		}
	}
	return b
}
