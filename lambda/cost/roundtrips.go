package cost

import (
	"context"
	"slices"
	"sort"
	"sync/atomic"
)

// Round trips: the calls a request waits for one after the other. Calls
// started together (Together's branches) are one wave; a call's lineage of
// branches says which it waited for, so that the count is of what waited,
// not of when each ran.

// RoundTrips returns the length of the longest chain of calls each started
// after the one before it ended: calls that overlap count once, and calls in
// different branches of one Together never wait for one another.
func (m *Meter) RoundTrips() int {
	_, critical := m.Critical()
	n := 0
	for _, on := range critical {
		if on {
			n++
		}
	}
	return n
}

// Critical returns the calls recorded, by end time, and which of them are
// the longest chain RoundTrips counts (the first such chain to end): the
// critical path, whose length is the round trips.
func (m *Meter) Critical() ([]Call, []bool) {
	calls := m.Calls()
	sort.Slice(calls, func(i, j int) bool { return calls[i].End.Before(calls[j].End) })
	chain := make([]int, len(calls)) // the longest chain ending with each call
	prev := make([]int, len(calls))  // the call before it in that chain, -1 for none
	last := -1                       // the last call of the longest chain
	for i, c := range calls {
		chain[i], prev[i] = 1, -1
		// The calls that ended before c started come before it by end time.
		before := sort.Search(i, func(j int) bool { return calls[j].End.After(c.Start) })
		for j := range before {
			if chain[j]+1 > chain[i] && !concurrent(calls[j].branch, c.branch) {
				chain[i], prev[i] = chain[j]+1, j
			}
		}
		if last < 0 || chain[i] > chain[last] {
			last = i
		}
	}
	critical := make([]bool, len(calls))
	for i := last; i >= 0; i = prev[i] {
		critical[i] = true
	}
	return calls, critical
}

// branch is one of a group of concurrent branches (a wave), inside the
// branch its wave was started from.
type branch struct {
	wave   uint64
	parent *branch
}

type branchKey struct{}

var waves atomic.Uint64

// Together starts a group of concurrent branches under ctx and returns a
// function giving each branch its context (call it once per goroutine): a
// call in one branch never counts as waiting for a call in another.
func Together(ctx context.Context) func() context.Context {
	wave := waves.Add(1)
	parent, _ := ctx.Value(branchKey{}).(*branch)
	return func() context.Context {
		return context.WithValue(ctx, branchKey{}, &branch{wave: wave, parent: parent})
	}
}

// concurrent reports whether two calls were made in different branches of
// one wave: where their branches first differ from the root, both are of
// the same wave.
func concurrent(a, b *branch) bool {
	pa, pb := lineage(a), lineage(b)
	for i := range min(len(pa), len(pb)) {
		if pa[i] != pb[i] {
			return pa[i].wave == pb[i].wave
		}
	}
	return false // one branch holds the other: sequential, as their times say
}

// lineage is b's branches from the outermost.
func lineage(b *branch) []*branch {
	var out []*branch
	for ; b != nil; b = b.parent {
		out = append(out, b)
	}
	slices.Reverse(out)
	return out
}
