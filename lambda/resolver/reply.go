package resolver

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Encoding a reply: a single event's value or its error, or a batch's array
// of items, each {"data": ...} or {"data": null, "errorMessage", "errorType"},
// kept within Lambda's payload limit.

// reply encodes the results of the events: a single event's value, or its
// error as the invocation's; or a batch's array of items, the largest
// answers turned into errors should the whole pass the payload limit.
func (h *Handler) reply(events []appsync.Event, results []Result, batch bool) ([]byte, error) {
	if !batch {
		r := results[0]
		if r.Err != nil {
			return nil, h.invokeError(events[0].Info.Field(), r.Err)
		}
		reply, err := encodeData(r.Data)
		if err == nil && len(reply) > payload.MaxBytes {
			err = tooLarge(len(reply))
		}
		if err != nil {
			return nil, h.invokeError(events[0].Info.Field(), err)
		}
		return reply, nil
	}
	// The items are appended to the reply as they are encoded (and valid):
	// joined, not re-encoded, which would make encoding/json check and
	// compact each of them again.
	size := 2 // the reply's size, exact for JSON kept as it is
	for _, r := range results {
		if raw, ok := r.Data.(json.RawMessage); ok {
			size += len(raw) + len(`{"data":},`)
		} else {
			size += 192 // a user is 100-200 bytes
		}
	}
	reply := make([]byte, 0, size)
	reply = append(reply, '[')
	bounds := make([][2]int, len(results))
	for i, r := range results {
		if i > 0 {
			reply = append(reply, ',')
		}
		start := len(reply)
		reply = h.appendBatchItem(reply, &events[i], r)
		bounds[i] = [2]int{start, len(reply)}
	}
	reply = append(reply, ']')
	if len(reply) <= payload.MaxBytes {
		return reply, nil
	}
	items := make([]json.RawMessage, len(results))
	total := 1
	for i, b := range bounds {
		items[i] = reply[b[0]:b[1]]
		total += len(items[i]) + 1
	}
	// The budgets keep a batch's answers within the payload limit; should they
	// not, the largest answers become errors rather than the whole batch.
	for total > payload.MaxBytes {
		largest := 0
		for i := range items {
			if len(items[i]) > len(items[largest]) {
				largest = i
			}
		}
		failed := h.batchItem(&events[largest], Result{Err: tooLarge(len(items[largest]))})
		total += len(failed) - len(items[largest])
		items[largest] = failed
	}
	joined := make([]byte, 0, total)
	joined = append(joined, '[')
	for i, item := range items {
		if i > 0 {
			joined = append(joined, ',')
		}
		joined = append(joined, item...)
	}
	return append(joined, ']'), nil
}

// encodeData encodes a single event's answer; JSON already is kept as it is.
func encodeData(data any) ([]byte, error) {
	if raw, ok := data.(json.RawMessage); ok {
		return raw, nil
	}
	if b, ok := appendJSON(make([]byte, 0, 256), data); ok {
		return b, nil
	}
	return payload.Marshal(data)
}

// appendJSON appends data to dst without reflection when it is one of the
// entities that encode themselves (exactly: a type embedding one, such as
// userResult, has more to say), and reports whether it was.
func appendJSON(dst []byte, data any) ([]byte, bool) {
	switch d := data.(type) {
	case store.User: // the most frequent answer
		return d.AppendJSON(dst), true
	case postResult:
		return d.AppendJSON(dst), true
	case store.Post:
		return d.AppendJSON(dst), true
	case store.Comment:
		return d.AppendJSON(dst), true
	}
	return dst, false
}

// batchItem encodes one event's answer as an item of a batch reply.
func (h *Handler) batchItem(ev *appsync.Event, r Result) json.RawMessage {
	return h.appendBatchItem(nil, ev, r)
}

// appendBatchItem appends one event's answer as an item of a batch reply to
// dst. An answer that is JSON already (a page passed through from the
// source) is wrapped, not checked and compacted again; users, posts and
// comments are encoded without reflection (appendJSON).
func (h *Handler) appendBatchItem(dst []byte, ev *appsync.Event, r Result) json.RawMessage {
	if r.Err == nil {
		if raw, ok := r.Data.(json.RawMessage); ok {
			return append(append(append(dst, `{"data":`...), raw...), '}')
		}
		if b, ok := appendJSON(append(dst, `{"data":`...), r.Data); ok {
			return append(b, '}')
		}
	}
	item := appsync.BatchItem{Data: r.Data}
	if r.Err != nil {
		h.logError(ev.Info.Field(), r.Err)
		item = appsync.BatchItem{ErrorMessage: errs.PublicMessage(r.Err), ErrorType: errs.KindOf(r.Err).String()}
	}
	b, err := payload.Marshal(item)
	if err != nil {
		return h.appendBatchItem(dst, ev, Result{Err: errs.Wrap("resolver.encode", errs.Internal, "internal error", err)})
	}
	return append(dst, b...)
}

// tooLarge is the error for an answer that would not fit in a Lambda reply.
func tooLarge(size int) error {
	return errs.E("resolver.encode", errs.Validation, fmt.Sprintf(
		"the answer would take %d bytes, more than the %d a Lambda may return to AppSync: select fewer fields or ask for fewer items",
		size, payload.MaxBytes))
}

// invokeError converts err for a single (unbatched) invocation.
func (h *Handler) invokeError(field string, err error) error {
	h.logError(field, err)
	return messages.InvokeResponse_Error{Type: errs.KindOf(err).String(), Message: errs.PublicMessage(err)}
}

// logError logs internal errors with their cause, and client errors briefly.
func (h *Handler) logError(field string, err error) {
	if errs.KindOf(err) == errs.Internal || errs.KindOf(err) == errs.Throttled {
		h.log.Error("resolver failed", "field", field, "errorType", errs.KindOf(err).String(), "cause", err.Error())
		return
	}
	h.log.Info("request refused", "field", field, "errorType", errs.KindOf(err).String(), "message", errs.PublicMessage(err))
}

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
