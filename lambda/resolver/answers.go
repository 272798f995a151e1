package resolver

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The zero-invocation short-circuit. The Lambda resolving a field resolves
// the levels of its selection below it as their own resolvers would, one
// level at a time, and attaches each answer to the object it belongs to,
// in AnswersMember, keyed by AnswerKey (the field and the exact arguments
// of the occurrence); appsyncjs/child.js returns it early, and a child
// without an answer invokes the Lambda as ever.
//
// The contract: an answer holds everything the field's execution may
// select, or is not given (the selection's reading decides which can be
// known: WithSelectionReading), and no answer is given for a later page, a
// failed resolver, or past the budgets (Route.ReplyBudget,
// answerRequests, half the invocation's time; mutationAnswerTime after a
// mutation's write). What is not answered is resolved by invoking the
// Lambda: correct, only slower. docs/pattern.md ("Answers below, returned
// early") says why each rule is needed, and docs/deploying.md what each
// reading costs.

// answerRequests bounds the DynamoDB requests one invocation spends on
// answers: a level whose requests could pass it is left to the children's
// own invocations. 200 answers a page of 100 posts with their comments and
// the comments' authors (100 Queries and a few BatchGetItem calls).
const answerRequests = 200

// mutationAnswerTime is the time a mutation's answers get once its write
// has committed (an author's BatchGetItem and a few retries): they are
// optional work, and past it the children invoke on their own.
const mutationAnswerTime = 500 * time.Millisecond

// answerChildren adds to the results of evs the answers of the fields
// selected below them. stopAt is when no new level may start.
func (h *Handler) answerChildren(ctx context.Context, evs []*appsync.Event, results []Result, stopAt time.Time) {
	if h.noAnswers {
		return
	}
	tops, level := h.answerable(evs, results)
	if len(tops) == 0 {
		return
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = stopAt.Add(FunctionTimeout / 2)
	}
	answerBy := stopAt.Add(deadline.Sub(stopAt) / 2)
	if tops[0].route.Type == "Mutation" { // never batched: the write has committed
		stopAt = time.Now().Add(mutationAnswerTime)
		answerBy = stopAt
		// The answers read what the write just wrote: an eventually
		// consistent read may not see it yet (the post's commentCount
		// before the comment). Reads of an index cannot be consistent.
		ctx = store.WithConsistentReads(ctx)
	}
	actx, cancel := context.WithDeadline(ctx, answerBy)
	defer cancel()
	spent := 0
	for len(level) > 0 && time.Now().Before(stopAt) {
		var ok bool
		if level, ok = h.answerLevel(actx, level, &spent); !ok {
			break
		}
	}
	for _, t := range tops {
		used := t.route.replyBudget() - t.room.bytes // the object and its answers
		results[t.i].Data = json.RawMessage(appendAssembled(make([]byte, 0, used+64), t.raw, t.route, t.objs))
	}
}

// top is a result whose objects' children may be answered.
type top struct {
	i     int
	route Route
	raw   json.RawMessage
	objs  []*answered
	room  *replyRoom
}

// answerable returns the results of evs whose selections ask for children
// an answer can serve, and their objects: the first level.
func (h *Handler) answerable(evs []*appsync.Event, results []Result) ([]top, []*answered) {
	var tops []top
	var level []*answered
	type parsed struct {
		set appsync.Selection
		ok  bool // the selection asks for a child that an answer can serve
	}
	var groups selections    // a batch's events mostly share one
	sets := map[int]parsed{} // by group
	mentions := map[string]bool{}
	for i, ev := range evs {
		route, ok := h.table.of(ev.Info.ParentTypeName, ev.Info.FieldName)
		if !ok || results[i].Err != nil || results[i].Data == nil {
			continue
		}
		text := ev.Info.SelectionSetGraphQL
		mentioned, seen := mentions[text]
		if !seen {
			mentioned = h.mentionsChild(text, route.Returns)
			mentions[text] = mentioned
		}
		if !mentioned {
			continue // most batches: a selection of attributes only, not worth parsing
		}
		key := groups.of(ev)
		p, seen := sets[key]
		if !seen {
			set, err := h.selectionOf(ev)
			p = parsed{set, err == nil && asksForChildren(set, route)}
			sets[key] = p
		}
		if !p.ok {
			continue
		}
		raw, err := encodeData(results[i].Data)
		if err != nil {
			continue
		}
		room := &replyRoom{ev: ev, bytes: route.replyBudget() - len(raw)}
		objs, ok := objectsIn(raw, route, []*appsync.Field{{Selection: p.set}}, room)
		if !ok {
			continue
		}
		tops = append(tops, top{i, route, raw, objs, room})
		level = append(level, objs...)
	}
	return tops, level
}

// answerLevel resolves the answers the objects of one level ask for, each
// field's at once, and returns the objects of the next; false, with nothing
// resolved, when the level could pass the requests left of answerRequests
// (spent, which it adds to).
func (h *Handler) answerLevel(ctx context.Context, level []*answered, spent *int) ([]*answered, bool) {
	byRoute, order := plan(h.table, level)
	bound := 0
	for _, key := range order {
		bound += requestsBound(byRoute[key][0].route, len(byRoute[key]))
	}
	if *spent+bound > answerRequests {
		return nil, false
	}
	lctx, meter := cost.WithMeter(ctx)
	outs := make([][]Result, len(order))
	resolve := func(lctx context.Context, k int) {
		key := order[k]
		batch := make([]*appsync.Event, len(byRoute[key]))
		for j, a := range byRoute[key] {
			batch[j] = a.ev
		}
		outs[k] = h.safely(lctx, key, h.fields[key], batch)
	}
	if len(order) == 1 {
		resolve(lctx, 0) // most levels: one field, no goroutine to start
	} else {
		var wg sync.WaitGroup
		branch := cost.Together(lctx) // a level's fields wait for none of the others
		for k := range order {
			ctx := branch()
			wg.Go(func() { resolve(ctx, k) })
		}
		wg.Wait()
	}
	*spent += meter.Total()
	var next []*answered
	for k, key := range order {
		for j, a := range byRoute[key] {
			next = append(next, a.attach(outs[k][j])...)
		}
	}
	return next, true
}

// mentionsChild reports whether text names a field of typ that an answer
// can serve: a fast test that lets most selections go unparsed (a name in
// an alias or an argument only costs a parse).
func (h *Handler) mentionsChild(text, typ string) bool {
	for _, r := range h.table.All() {
		if r.Type == typ && r.EarlyReturn() && strings.Contains(text, r.Field) {
			return true
		}
	}
	return false
}

// asksForChildren reports whether set, the selection of a field of the
// route, selects a field of its objects that an answer can serve.
func asksForChildren(set appsync.Selection, route Route) bool {
	fields, _ := objectFields(set, route)
	for _, f := range fields {
		if r, ok := route.child(f.Name); ok && r.EarlyReturn() {
			return true
		}
	}
	return false
}
