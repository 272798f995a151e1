package kept_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/kept"
)

// keeper is one kept value under its mutex, on a clock a test moves.
type keeper struct {
	mu    sync.Mutex
	v     *kept.Value[int]
	now   atomic.Int64 // Unix milliseconds
	reads atomic.Int64
}

func (k *keeper) advance(d time.Duration) { k.now.Add(d.Milliseconds()) }

func (k *keeper) through(ctx context.Context, read func(context.Context) (int, error)) (int, error) {
	return kept.Through(ctx, &k.mu, func() time.Time { return time.UnixMilli(k.now.Load()) }, time.Second,
		func() *kept.Value[int] { return k.v }, func(v *kept.Value[int]) { k.v = v }, read)
}

// 50 callers at once make one read, and share it; within the TTL no one
// reads again; after it, one does.
func TestConcurrentMissesMakeOneRead(t *testing.T) {
	k := &keeper{}
	release := make(chan struct{})
	read := func(context.Context) (int, error) { k.reads.Add(1); <-release; return 7, nil }
	var wg sync.WaitGroup
	got := make([]int, 50)
	for i := range got {
		wg.Go(func() { got[i], _ = k.through(t.Context(), read) })
	}
	time.Sleep(50 * time.Millisecond) // let them all find it being read
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != 7 {
			t.Fatalf("caller %d got %d", i, v)
		}
	}
	if n := k.reads.Load(); n != 1 {
		t.Errorf("%d reads for 50 callers at once, want 1", n)
	}
	k.advance(999 * time.Millisecond)
	if v, _ := k.through(t.Context(), read); v != 7 || k.reads.Load() != 1 {
		t.Errorf("within the TTL: %d, %d reads", v, k.reads.Load())
	}
	k.advance(time.Millisecond)
	if _, _ = k.through(t.Context(), read); k.reads.Load() != 2 {
		t.Errorf("past the TTL: %d reads, want 2", k.reads.Load())
	}
}

// A failed read is not kept: the next caller reads again; a caller whose
// context ends while it waits gets ErrWaitCut.
func TestAFailedReadIsNotKept(t *testing.T) {
	k := &keeper{}
	failing := errors.New("throttled")
	if _, err := k.through(t.Context(), func(context.Context) (int, error) { return 0, failing }); !errors.Is(err, failing) {
		t.Fatalf("the read's error: %v", err)
	}
	if k.v != nil {
		t.Errorf("a failed read was kept")
	}
	started, release := make(chan struct{}), make(chan struct{})
	go k.through(t.Context(), func(context.Context) (int, error) { close(started); <-release; return 1, nil }) //nolint:errcheck
	<-started
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := k.through(ctx, func(context.Context) (int, error) { return 2, nil }); !errors.Is(err, kept.ErrWaitCut) || !errors.Is(err, context.Canceled) {
		t.Errorf("a wait cut by its context: %v", err)
	}
	close(release)
}
