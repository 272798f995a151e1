package cost

import (
	"context"
	"testing"
	"time"
)

func TestRoundTrips(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name  string
		calls [][2]int // start, end in ms
		want  int
	}{
		{"none", nil, 0},
		{"one", [][2]int{{0, 5}}, 1},
		{"three at once", [][2]int{{0, 5}, {1, 6}, {0, 4}}, 1},
		{"one after the other", [][2]int{{0, 5}, {5, 9}, {10, 12}}, 3},
		// user, then posts, then 11 comment Queries together, then authors.
		{"levels", [][2]int{{0, 3}, {4, 7}, {8, 12}, {8, 11}, {9, 13}, {8, 10}, {14, 16}}, 4},
		// A slow call overlapping a chain of two counts once; the chain twice.
		{"slow beside a chain", [][2]int{{0, 20}, {1, 3}, {4, 6}}, 2},
		{"recorded out of order", [][2]int{{10, 12}, {0, 5}, {6, 9}}, 3},
	} {
		m := &Meter{}
		for _, c := range tc.calls {
			m.record(Call{Operation: "Query", Start: at(c[0]), End: at(c[1])})
		}
		if got := m.RoundTrips(); got != tc.want {
			t.Errorf("%s: RoundTrips = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// Calls in different branches of one Together never chain, whatever their
// times (a loaded machine may run one branch after another has ended);
// calls within a branch, and across waves, chain by their times.
func TestRoundTripsOfConcurrentBranches(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	ctx, m := WithMeter(context.Background())
	branchOf := func(ctx context.Context) *branch { b, _ := ctx.Value(branchKey{}).(*branch); return b }
	record := func(ctx context.Context, start, end int) {
		m.record(Call{Operation: "Query", Start: at(start), End: at(end), branch: branchOf(ctx)})
	}
	record(ctx, 0, 2) // the parent's read
	level := Together(ctx)
	a, b := level(), level()
	record(a, 3, 5) // two branches, the second scheduled only after the first ended
	record(b, 6, 8)
	record(b, 9, 10) // and a second call in that branch, after its first
	inner := Together(a)
	a1, a2 := inner(), inner()
	record(a1, 11, 12) // a nested wave of branch a: siblings of each other
	record(a2, 13, 14)
	if got := m.RoundTrips(); got != 3 { // the parent, then b's two calls (or a and a nested call)
		t.Errorf("RoundTrips = %d, want 3", got)
	}
	next := Together(ctx) // a later wave under the parent: after the first one
	record(next(), 15, 16)
	if got := m.RoundTrips(); got != 4 {
		t.Errorf("with a later wave: RoundTrips = %d, want 4", got)
	}
}

// The critical path is the chain RoundTrips counts: the levels' calls that
// waited for one another, one a level, and none of the calls beside them.
func TestCritical(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	m := &Meter{}
	// user, then posts, then three comment Queries together (the slowest
	// ends last), then authors.
	for i, c := range [][2]int{{0, 3}, {4, 7}, {8, 12}, {8, 11}, {9, 13}, {14, 16}} {
		m.record(Call{Operation: "Query", Start: at(c[0]), End: at(c[1]), Tag: i + 1})
	}
	calls, critical := m.Critical()
	var on []int
	for i, c := range calls {
		if critical[i] {
			on = append(on, c.Tag)
		}
	}
	// By end time: 1, 2, 4, 3, 5, 6. The authors' call started after every
	// comment Query ended; the first of them to end is the one chained.
	if len(on) != 4 || on[0] != 1 || on[1] != 2 || on[3] != 6 || m.RoundTrips() != 4 {
		t.Errorf("critical calls %v (round trips %d), want 1, 2, a comment Query, 6", on, m.RoundTrips())
	}
}
