// Package resolver is the Lambda behind every AppSync direct resolver: it
// decodes the event (or batch), routes it on "parentTypeName.fieldName" and
// encodes the reply, converting errors once: an errs.Error's Kind becomes the
// errorType, any other error an InternalError whose cause is only logged.
package resolver

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// WithMetricsNamespace puts the per-invocation metrics in namespace (the
// stack's name, so that two stacks' metrics do not mix).
func WithMetricsNamespace(namespace string) Option {
	return func(h *Handler) { h.metrics = emfMetrics(namespace) }
}

// WithCostLog writes the cost line of each invocation (see Invoke) to w,
// with one Write, instead of to standard output, where Lambda takes its logs
// from. The line does not go through the logger: slog would re-encode the
// EMF declaration as JSON on every invocation.
func WithCostLog(w io.Writer) Option { return func(h *Handler) { h.costs = w } }

// WithoutPrefetch makes parents never read the first page of a connection
// together with themselves: each page is its own Query (the layout of AppSync
// batching and BatchGetItem alone, which the benchmark compares with).
func WithoutPrefetch() Option { return func(h *Handler) { h.noPrefetch = true } }

// WithoutAnswers makes replies carry no answers for child fields (the
// layout of direct Lambda resolvers on every field, which cannot return
// early, and which the benchmark compares with).
func WithoutAnswers() Option { return func(h *Handler) { h.noAnswers = true } }

// WithSelectionReading makes the handler read selections as AppSync writing
// them under r. The default, appsync.FirstOccurrence, is right under either
// reading; appsync.EveryOccurrence reads and answers for the selection alone,
// cheaper, and right only where AppSync writes every occurrence.
func WithSelectionReading(r appsync.Reading) Option {
	return WithSelectionReadingFrom(func() appsync.Reading { return r })
}

// WithSelectionReadingFrom is WithSelectionReading with the reading asked of
// reading at each event (probe.Handoff's, once the deployment's probe has
// told it).
func WithSelectionReadingFrom(reading func() appsync.Reading) Option {
	return func(h *Handler) { h.reading = reading }
}

// Invoke handles one Lambda payload: one event, answered with its value or a
// messages.InvokeResponse_Error (Type is the errorType), or a batch,
// answered with an array in order of {"data"} or {"data", "errorMessage",
// "errorType"}. Each invocation logs one EMF cost line.
func (h *Handler) Invoke(ctx context.Context, request []byte) ([]byte, error) {
	start := time.Now()
	ctx, cancel := withMargin(ctx, start)
	defer cancel()
	ctx, meter := cost.WithMeter(ctx)
	events, batch, err := h.decode(request)
	field := ""
	if len(events) > 0 {
		field = events[0].Info.Field()
	}
	defer func() { h.logCost(ctx, field, len(events), meter.Summary(), time.Since(start)) }()
	if err != nil {
		return nil, h.invokeError("", errs.Wrap("resolver.Invoke", errs.Validation, "malformed AppSync event", err))
	}
	if !batch {
		if err := h.answered(&events[0]); err != nil {
			return nil, err // as a feature answered it
		}
	}
	ptrs := make([]*appsync.Event, len(events))
	for i := range events {
		ptrs[i] = &events[i]
	}
	results := h.resolve(ctx, ptrs)
	h.answerChildren(ctx, ptrs, results, halfway(ctx, start))
	return h.reply(events, results, batch)
}

// answered is a feature's answer to ev before it is routed (Feature.Answer),
// or nil.
func (h *Handler) answered(ev *appsync.Event) error {
	var request []byte // lower case, once
	for _, f := range h.features {
		if f.Answer == nil {
			continue
		}
		if request == nil {
			request = bytes.ToLower(ev.Request)
		}
		if bytes.Contains(request, []byte(f.AnswerHeader)) {
			if err := f.Answer(ev); err != nil {
				return err
			}
		}
	}
	return nil
}

// resolve routes each event to its field's resolver. Events of one field are
// resolved together (AppSync batches hold one field; a mixed array is split).
func (h *Handler) resolve(ctx context.Context, events []*appsync.Event) []Result {
	results := make([]Result, len(events))
	type field struct{ parent, name string }
	groups := map[field][]int{}
	var order []field
	for i, ev := range events {
		f := field{ev.Info.ParentTypeName, ev.Info.FieldName}
		if _, ok := groups[f]; !ok {
			order = append(order, f)
		}
		groups[f] = append(groups[f], i)
	}
	for _, f := range order {
		idx := groups[f]
		key := f.parent + "." + f.name
		fn, ok := h.fields[key]
		if !ok {
			err := errs.E("resolver.route", errs.Validation, fmt.Sprintf("no resolver for field %q", key))
			for _, i := range idx {
				results[i] = Result{Err: err}
			}
			continue
		}
		group := make([]*appsync.Event, len(idx))
		for j, i := range idx {
			group[j] = events[i]
		}
		for j, r := range h.safely(ctx, key, fn, group) {
			results[idx[j]] = r
		}
	}
	return results
}

// WithFeature serves the feature's fields beside the core's (a field
// routed twice panics in New).
func WithFeature(f Feature) Option { return func(h *Handler) { h.features = append(h.features, f) } }

// Routes is the table of the fields the handler resolves: the core's and
// its features'. The local AppSync and the stack read it.
func (h *Handler) Routes() *Routes { return h.table }

// The time an invocation has: a margin kept before Lambda's deadline, so
// that every event is answered with an error AppSync can show rather than
// cut off, and the half of it past which no new level of answers starts.

// withMargin returns ctx with a deadline a tenth of the time left (250 ms
// to 1 s) before the invocation's, so that every event is answered with an
// error AppSync can show rather than cut off by Lambda's timeout.
func withMargin(ctx context.Context, now time.Time) (context.Context, context.CancelFunc) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return context.WithCancel(ctx)
	}
	margin := min(max(deadline.Sub(now)/10, 250*time.Millisecond), time.Second)
	return context.WithDeadline(ctx, deadline.Add(-margin))
}

// halfway is when half of the time ctx leaves after start has passed: no
// new level of answers starts after it.
func halfway(ctx context.Context, start time.Time) time.Time {
	deadline, ok := ctx.Deadline()
	if !ok {
		return start.Add(FunctionTimeout / 2)
	}
	return start.Add(deadline.Sub(start) / 2)
}
