package resolver

import (
	"context"
	"time"
)

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
