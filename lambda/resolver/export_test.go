package resolver

import (
	"context"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// Resolved resolves payload as Invoke does, answers included, and returns
// a function that encodes the reply, as Invoke does, each time it is called:
// the traffic benchmark measures encoding alone with it.
func (h *Handler) Resolved(ctx context.Context, payload []byte) (encode func() ([]byte, error), err error) {
	events, batch, err := appsync.Decode(payload)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*appsync.Event, len(events))
	for i := range events {
		ptrs[i] = &events[i]
	}
	results := h.resolve(ctx, ptrs)
	h.answerChildren(ctx, ptrs, results, halfway(ctx, time.Now()))
	return func() ([]byte, error) { return h.reply(events, results, batch) }, nil
}
