package streams

// Tumbling windows, as Lambda's event source mapping runs them with
// TumblingWindowInSeconds: each record belongs to the window of its
// ApproximateCreationDateTime, given to the second (stamps.go), and a
// window never reopens (a record older than the shard's open window joins
// it, one older than a window closed goes to the next); each invocation carries the state the
// last successful one returned, and the window's own invocations return a
// new one (a response without "state" is a failed invocation); when the
// window is over (a record of a later window arrives, or a poll finds its
// end passed) the function is invoked once more with no records,
// isFinalInvokeForWindow and the state, until that succeeds (here: up to
// MaxRetries+1 times, then the state goes to OnFailure). A state over
// MaxWindowState ends its window early: the same final invocation, with
// isWindowTerminatedEarly too, and the window goes on with a fresh state.
//
// A window's records are checkpointed at its final invocation: a poller
// started again from the checkpoints reads the open window's records again,
// as Lambda does when it loses a window's state.

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
)

// MaxWindowState is the largest state Lambda carries between a window's
// invocations (1 MB per shard).
const MaxWindowState = 1 << 20

// window is a shard's open window.
type window struct {
	start      time.Time
	state      map[string]string
	checkpoint string // the last sequence number read while it was open
}

// windowOf returns the window r belongs to on shard: the window of its
// creation time (stamps.go), or, for a record older than a window closed
// or open on the shard, the first window not closed.
func (p *Poller) windowOf(shard string, r events.DynamoDBEventRecord) time.Time {
	t := r.Change.ApproximateCreationDateTime.UTC()
	if closed := p.closed[shard]; t.Before(closed) {
		t = closed
	}
	start := t.Truncate(p.cfg.Window)
	if w := p.windows[shard]; w != nil && start.Before(w.start) {
		return w.start
	}
	return start
}

// deliverWindowed delivers recs, each in its window, closing the windows
// they end.
func (p *Poller) deliverWindowed(ctx context.Context, shard string, recs []events.DynamoDBEventRecord) error {
	for len(recs) > 0 {
		start := p.windowOf(shard, recs[0])
		n := 1
		for n < len(recs) && p.windowOf(shard, recs[n]).Equal(start) {
			n++
		}
		if w := p.windows[shard]; w != nil && !w.start.Equal(start) {
			if err := p.closeWindow(ctx, shard, false); err != nil {
				return err
			}
		}
		if p.windows[shard] == nil {
			p.windows[shard] = &window{start: start, state: map[string]string{}}
		}
		if err := p.deliver(ctx, shard, recs[:n]); err != nil {
			return err
		}
		recs = recs[n:]
	}
	return nil
}

// CloseWindows ends every open window now, with its final invocation, as
// its end passing would: for a model that measures a window's writes
// without waiting for it.
func (p *Poller) CloseWindows(ctx context.Context) error {
	for shard := range p.windows {
		if err := p.closeWindow(ctx, shard, false); err != nil {
			return err
		}
	}
	return nil
}

// closeEnded closes the windows whose end has passed.
func (p *Poller) closeEnded(ctx context.Context, now time.Time) error {
	for shard, w := range p.windows {
		if !w.start.Add(p.cfg.Window).After(now) {
			if err := p.closeWindow(ctx, shard, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeWindow invokes the shard's open window's final invocation and
// checkpoints what it read; early keeps the window open, with a fresh state.
func (p *Poller) closeWindow(ctx context.Context, shard string, early bool) error {
	w := p.windows[shard]
	var err error
	for attempt := 0; attempt <= p.cfg.MaxRetries; attempt++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if _, err = p.invokeWindow(ctx, shard, nil, true, early); err == nil {
			break
		}
	}
	if err != nil {
		p.fail(Failure{ShardID: shard, Condition: "RetryAttemptsExhausted", Err: fmt.Errorf("the final invocation of the window from %v: %w", w.start, err)})
	}
	if early {
		w.state = map[string]string{}
		return nil
	}
	if w.checkpoint != "" {
		p.checkpoints.set(shard, w.checkpoint)
	}
	p.closed[shard] = w.start.Add(p.cfg.Window)
	delete(p.windows, shard)
	return nil
}

// windowResponse is a windowed invocation's response.
type windowResponse struct {
	State             *map[string]string                `json:"state"`
	BatchItemFailures []events.DynamoDBBatchItemFailure `json:"batchItemFailures"`
}

// invokeWindow invokes the function with recs in the shard's open window,
// with its state, and keeps the state it returns when it succeeds.
func (p *Poller) invokeWindow(ctx context.Context, shard string, recs []events.DynamoDBEventRecord, final, early bool) (windowResponse, error) {
	w := p.windows[shard]
	ev := events.DynamoDBTimeWindowEvent{
		DynamoDBEvent: events.DynamoDBEvent{Records: recs},
		TimeWindowProperties: events.TimeWindowProperties{
			Window: events.Window{Start: events.RFC3339EpochTime{Time: w.start}, End: events.RFC3339EpochTime{Time: w.start.Add(p.cfg.Window)}}, State: w.state, ShardID: shard,
			EventSourceARN: p.streamARN, IsFinalInvokeForWindow: final, IsWindowTerminatedEarly: early,
		},
	}
	if ev.Records == nil {
		ev.Records = []events.DynamoDBEventRecord{}
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return windowResponse{}, err
	}
	out, err := p.call(ctx, payload, len(recs))
	if err != nil {
		return windowResponse{}, err
	}
	var resp windowResponse
	if err := json.Unmarshal(out, &resp); err != nil || resp.State == nil {
		return windowResponse{}, fmt.Errorf("%w: a windowed invocation's response without a state (%s)", errFunction, out)
	}
	if len(resp.BatchItemFailures) == 0 && !final {
		w.state = *resp.State
		if len(recs) > 0 {
			w.checkpoint = recs[len(recs)-1].Change.SequenceNumber
		}
	}
	return resp, nil
}

// stateSize is the bytes of a state as Lambda measures it: its JSON.
func stateSize(state map[string]string) int {
	raw, _ := json.Marshal(state) // strings always encode
	return len(raw)
}
