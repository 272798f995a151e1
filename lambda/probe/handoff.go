package probe

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/example/appsync-dynamo/lambda/selection"
)

// The verdict handed to the resolver function: the deployment's probe
// writes it into a parameter (Systems Manager's), which the function reads
// in the background from the start of init.

// RetryEvery is how long a Handoff that has no verdict waits before it
// reads the parameter again: the probe writes it after the API exists, so
// an execution environment started by the probe's own queries reads it
// missing, and must learn it soon after.
const RetryEvery = time.Minute

// Handoff is the reading the deployment's probe found, for the resolver's
// handler (resolver.WithSelectionReadingFrom). Until the verdict is read, and
// whenever it cannot be, the reading is selection.FirstOccurrence, right
// under either; a verdict once read is kept for the environment's life (a
// deployment that changes it starts new environments: the probe runs when
// the function changes).
type Handoff struct {
	read    func(context.Context) (string, error)
	now     func() time.Time
	known   atomic.Int32 // 0: not yet; else the reading + 1
	next    atomic.Int64 // when to read again (Unix nanoseconds), while not known
	reading sync.Mutex   // held by the read under way
	failed  func(error)
}

// NewHandoff returns a Handoff reading the verdict with read (the
// parameter's value: a selection.Reading's name) and starts the first read
// in the background. failed, if not nil, is told each read's error (a value
// that names no reading included).
func NewHandoff(read func(context.Context) (string, error), failed func(error)) *Handoff {
	h := &Handoff{read: read, now: time.Now, failed: failed}
	h.next.Store(h.now().Add(RetryEvery).UnixNano())
	go h.fetch()
	return h
}

// Reading returns the verdict, or selection.FirstOccurrence while there is
// none; then, at most once every RetryEvery, it reads the parameter again
// in the background.
func (h *Handoff) Reading() selection.Reading {
	if k := h.known.Load(); k != 0 {
		return selection.Reading(k - 1)
	}
	if next := h.next.Load(); h.now().UnixNano() >= next && h.next.CompareAndSwap(next, h.now().Add(RetryEvery).UnixNano()) {
		go h.fetch()
	}
	return selection.FirstOccurrence
}

// fetch reads the parameter once (no two reads at once).
func (h *Handoff) fetch() {
	if !h.reading.TryLock() {
		return
	}
	defer h.reading.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	value, err := h.read(ctx)
	var r selection.Reading
	if err == nil {
		r, err = selection.ParseReading(value)
	}
	if err != nil {
		if h.failed != nil {
			h.failed(err)
		}
		return
	}
	h.known.Store(int32(r) + 1)
}
