package cost

import (
	"context"
	"sync/atomic"
)

// A Branch is one of a group of concurrent branches (a wave, Together's),
// inside the branch its wave was started from (nil for none).
type Branch struct {
	Wave   uint64
	Parent *Branch
}

type branchKey struct{}

var waves atomic.Uint64

// Together starts a group of concurrent branches under ctx and returns a
// function giving each branch its context (call it once per goroutine): a
// call in one branch never counts as waiting for a call in another.
func Together(ctx context.Context) func() context.Context {
	wave := waves.Add(1)
	parent, _ := ctx.Value(branchKey{}).(*Branch)
	return func() context.Context {
		return context.WithValue(ctx, branchKey{}, &Branch{Wave: wave, Parent: parent})
	}
}
