package probe

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// The verdict handed to the resolver function: the deployment's probe
// writes it into a parameter (Systems Manager's), which the function reads
// in the background from the start of init.

// retryEvery is how long a Handoff that has no verdict waits before it
// reads the parameter again: the probe writes it after the API exists, so
// an execution environment started by the probe's own queries reads it
// missing, and must learn it soon after.
const retryEvery = time.Minute

// firstReadWait is how long an event that comes before the first read of the
// parameter has ended waits for it, so that a new environment's first
// request is served under the verdict (the read is one signed call, begun
// at init).
const firstReadWait = time.Second

// refreshEvery is how long a Handoff keeps a verdict before it reads the
// parameter again: the daily probe may change it (AppSync writing
// selections another way), and every environment follows within this.
const refreshEvery = 5 * time.Minute

// Handoff is the reading the deployment's probe found, for the handler
// (resolver.WithSelectionReadingFrom): appsync.FirstOccurrence until a
// verdict is read and whenever none can be; a verdict read is served until a
// later read (a refreshEvery, in the background) gives another.
type Handoff struct {
	read    func(context.Context) (string, error)
	now     func() time.Time
	known   atomic.Int32 // 0: not yet; else the reading + 1
	next    atomic.Int64 // when to read again (Unix nanoseconds)
	reading sync.Mutex   // held by the read under way
	failed  func(error)
	told    func(appsync.Reading)
	// first is closed when the first read has ended; nil: none to wait for.
	first     chan struct{}
	firstWait time.Duration
}

// NewHandoff returns a Handoff reading the verdict with read and starts the
// first read in the background. failed, if not nil, is told each read's
// error; told, if not nil, each verdict that differs from the one before.
func NewHandoff(read func(context.Context) (string, error), failed func(error), told func(appsync.Reading)) *Handoff {
	h := &Handoff{read: read, now: time.Now, failed: failed, told: told, first: make(chan struct{}), firstWait: firstReadWait}
	h.next.Store(h.now().Add(retryEvery).UnixNano())
	go func() {
		defer close(h.first)
		h.fetch()
	}()
	return h
}

// Reading returns the verdict, or appsync.FirstOccurrence while there is
// none (after waiting up to firstReadWait for the first read), and when due
// reads the parameter again in the background, once however many ask.
func (h *Handoff) Reading() appsync.Reading {
	k := h.known.Load()
	if k == 0 && h.first != nil {
		h.waitFirst()
		k = h.known.Load()
	}
	if next := h.next.Load(); h.now().UnixNano() >= next {
		wait := retryEvery
		if k != 0 {
			wait = refreshEvery
		}
		if h.next.CompareAndSwap(next, h.now().Add(wait).UnixNano()) {
			go h.fetch()
		}
	}
	if k == 0 {
		return appsync.FirstOccurrence
	}
	return appsync.Reading(k - 1)
}

// waitFirst waits for the first read to end, up to firstWait.
func (h *Handoff) waitFirst() {
	select {
	case <-h.first:
		return
	default:
	}
	t := time.NewTimer(h.firstWait)
	defer t.Stop()
	select {
	case <-h.first:
	case <-t.C:
	}
}

// fetch reads the parameter once, after any read under way has ended (no
// two reads at once; Reading starts at most one a refreshEvery or
// retryEvery, so none is dropped and none piles up).
func (h *Handoff) fetch() {
	h.reading.Lock()
	defer h.reading.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	value, err := h.read(ctx)
	var r appsync.Reading
	if err == nil {
		r, err = appsync.ParseReading(value)
	}
	if err != nil {
		if h.failed != nil {
			h.failed(err)
		}
		return
	}
	if h.known.Load() == 0 { // the first verdict: kept a refreshEvery, set before it is seen
		h.next.Store(h.now().Add(refreshEvery).UnixNano())
	}
	before := h.known.Swap(int32(r) + 1)
	if before != int32(r)+1 && h.told != nil {
		h.told(r)
	}
}
