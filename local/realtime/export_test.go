package realtime

import (
	"encoding/json"
	"errors"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/local/executor"
)

// Project is what a subscriber of query (a subscription of one root field)
// with vars receives of a mutation's value, and how many errors with it.
func Project(h *Hub, query string, vars, value map[string]any) (map[string]any, int, error) {
	doc, errs := executor.Parse(h.schema, query)
	if len(errs) > 0 {
		return nil, 0, errs
	}
	op, err := executor.Prepare(h.schema, doc, doc.Operations[0], vars)
	if err != nil {
		return nil, 0, err
	}
	f, ok := doc.Operations[0].SelectionSet[0].(*ast.Field)
	if !ok {
		return nil, 0, errors.New("the subscription's root is not a field")
	}
	data, gqlErrs := h.project(op, collected{}, f, value)
	raw, err := UTF8Of245760.Encode(data)
	if err != nil {
		return nil, 0, err
	}
	var out map[string]any
	return out, len(gqlErrs), json.Unmarshal(raw, &out)
}

// Hold stops h's deliveries until the returned func is called: what is
// published meanwhile waits in the queue, in order.
func Hold(h *Hub) (release func()) {
	held := make(chan struct{})
	h.later(func() { <-held })
	return func() { close(held) }
}

// Expire ends the subscription id as its token's expiry does.
func Expire(h *Hub, id string) {
	h.mu.Lock()
	var s *subscription
	for sub := range h.subs {
		if sub.id == id {
			s = sub
		}
	}
	h.mu.Unlock()
	h.expire(s)
}
