// Package kept keeps values read from the table for a while in one Lambda
// execution environment, the callers that miss one meanwhile waiting for one
// read (a hot post's page, a trending ranking).
package kept

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Value is one value read from the table: when its read started, the
// read's outcome, and, while it is being read, Ready, which closes when the
// read ends. Its fields are guarded by the mutex its owner passes Through.
type Value[T any] struct {
	At    time.Time
	Ready chan struct{}
	V     T
	Err   error
}

// ErrWaitCut is the error of a caller whose context ended while it waited
// for another caller's read (wrapping the context's error).
var ErrWaitCut = errors.New("kept: the wait for a read was cut")

// Through returns the value get finds (under mu) if its read started within
// ttl of now(); otherwise it reads it once for every caller missing it, and
// keeps it with set, as of its read's start. A failed read is not kept, and
// a caller that waited for one reads on its own.
func Through[T any](ctx context.Context, mu *sync.Mutex, now func() time.Time, ttl time.Duration,
	get func() *Value[T], set func(*Value[T]), read func(context.Context) (T, error)) (T, error) {
	mu.Lock()
	k := get()
	if k != nil && (k.Ready != nil || now().Sub(k.At) < ttl) {
		ready := k.Ready
		mu.Unlock()
		if ready != nil {
			select {
			case <-ready:
			case <-ctx.Done():
				var zero T
				return zero, fmt.Errorf("%w: %w", ErrWaitCut, ctx.Err())
			}
		}
		mu.Lock()
		v, err := k.V, k.Err
		mu.Unlock()
		if err == nil {
			return v, nil
		}
		return read(ctx) // the shared read failed: try on one's own
	}
	k = &Value[T]{Ready: make(chan struct{})}
	set(k)
	mu.Unlock()
	start := now()
	v, err := read(ctx)
	mu.Lock()
	k.V, k.Err, k.At = v, err, start
	if err != nil && get() == k {
		set(nil) // an error is not kept
	}
	close(k.Ready)
	k.Ready = nil
	mu.Unlock()
	return v, err
}
