package probe

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// A clock the test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// newHandoff is NewHandoff on the clock c, its first read done.
func newHandoff(t *testing.T, c *clock, read func(context.Context) (string, error), failed func(error), told func(appsync.Reading)) *Handoff {
	t.Helper()
	h := &Handoff{read: read, now: c.now, failed: failed, told: told}
	h.next.Store(c.now().Add(retryEvery).UnixNano())
	h.fetch()
	return h
}

// waitFor polls cond for a second: the reads after the first run in the
// background.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatalf("%s: not within a second", what)
}

// Without a verdict the handler reads as first-occurrence, right under
// either reading, and reads the parameter again at most once a retryEvery,
// however many events ask at once; with one, once a refreshEvery, following
// a changed verdict and keeping it through a failed read.
func TestTheHandoffReadsAgainUntilItKnowsAndFollowsChanges(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	var reads atomic.Int32
	var value atomic.Value
	value.Store("")
	read := func(context.Context) (string, error) {
		reads.Add(1)
		if v := value.Load().(string); v != "" {
			return v, nil
		}
		return "", errors.New("ParameterNotFound")
	}
	var failures atomic.Int32
	var toldMu sync.Mutex
	var told []appsync.Reading
	h := newHandoff(t, c, read, func(error) { failures.Add(1) }, func(r appsync.Reading) { toldMu.Lock(); told = append(told, r); toldMu.Unlock() })
	if r := h.Reading(); r != appsync.FirstOccurrence || reads.Load() != 1 || failures.Load() != 1 {
		t.Fatalf("before any verdict: %v after %d reads, %d failures", r, reads.Load(), failures.Load())
	}
	many := func() {
		var wg sync.WaitGroup
		for range 100 {
			wg.Go(func() { h.Reading() })
		}
		wg.Wait()
	}
	many()
	if reads.Load() != 1 {
		t.Fatalf("%d reads within retryEvery of the first", reads.Load())
	}
	value.Store("every-occurrence")
	c.add(retryEvery)
	many()
	waitFor(t, "the verdict read after retryEvery", func() bool { return h.Reading() == appsync.EveryOccurrence })
	if reads.Load() != 2 {
		t.Errorf("%d reads, want 2: one a retryEvery", reads.Load())
	}
	c.add(refreshEvery - time.Second)
	many()
	if reads.Load() != 2 {
		t.Errorf("%d reads within refreshEvery of the verdict", reads.Load())
	}
	value.Store("")
	c.add(time.Second)
	many()
	waitFor(t, "a refresh", func() bool { return reads.Load() == 3 })
	if r := h.Reading(); r != appsync.EveryOccurrence {
		t.Errorf("after a failed refresh: %v; want the verdict kept", r)
	}
	value.Store("first-occurrence")
	c.add(refreshEvery)
	many()
	waitFor(t, "the changed verdict", func() bool { return h.Reading() == appsync.FirstOccurrence })
	toldMu.Lock()
	defer toldMu.Unlock()
	if len(told) != 2 || told[0] != appsync.EveryOccurrence || told[1] != appsync.FirstOccurrence {
		t.Errorf("told %v; want every-occurrence, then first-occurrence", told)
	}
}

// A value that names no reading is not a verdict: the handler stays on
// first-occurrence and the failure is told.
func TestTheHandoffRefusesAValueThatNamesNoReading(t *testing.T) {
	c := &clock{t: time.Unix(1_700_000_000, 0)}
	var told error
	h := newHandoff(t, c, func(context.Context) (string, error) { return "every", nil }, func(err error) { told = err }, nil)
	if r := h.Reading(); r != appsync.FirstOccurrence || told == nil {
		t.Errorf("reading %v, failure %v", r, told)
	}
}

// The events that come before the first read has ended wait for it, up to
// firstWait: a new environment's first request is served under the
// verdict, and a read slower than that is not waited for.
func TestTheFirstEventsWaitForTheFirstRead(t *testing.T) {
	for _, c := range []struct {
		name      string
		firstWait time.Duration
		want      appsync.Reading
	}{
		{"a read within the wait", time.Minute, appsync.EveryOccurrence},
		{"a read past the wait", 10 * time.Millisecond, appsync.FirstOccurrence},
	} {
		release := make(chan struct{})
		read := func(context.Context) (string, error) { <-release; return "every-occurrence", nil }
		h := &Handoff{read: read, now: time.Now, first: make(chan struct{}), firstWait: c.firstWait}
		h.next.Store(time.Now().Add(retryEvery).UnixNano())
		go func() {
			defer close(h.first)
			h.fetch()
		}()
		got := make(chan appsync.Reading)
		go func() { got <- h.Reading() }()
		time.Sleep(50 * time.Millisecond) // the event waits meanwhile, or has given up
		close(release)
		if r := <-got; r != c.want {
			t.Errorf("%s: %v, want %v", c.name, r, c.want)
		}
		<-h.first
		if r := h.Reading(); r != appsync.EveryOccurrence {
			t.Errorf("%s: after the read, %v", c.name, r)
		}
	}
}

// docs/deploying.md states the handoff's timings as these constants are.
func TestTheDocsStateTheHandoffsTimings(t *testing.T) {
	doc, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, c := range []struct {
		constant, stated time.Duration
		says             string
	}{
		{firstReadWait, time.Second, "waits for it, up to a second"},
		{retryEvery, time.Minute, "reads it again at most once a minute"},
		{refreshEvery, 5 * time.Minute, "follows it within five minutes"},
	} {
		if c.constant != c.stated || !strings.Contains(text, c.says) {
			t.Errorf("docs/deploying.md says %q (%v); the constant is %v", c.says, c.stated, c.constant)
		}
	}
}
