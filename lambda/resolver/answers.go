package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/payload"
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

// answerOverhead is what an answer adds to its object beside its value and
// key: quotes, colon, comma, and the member that holds the answers.
const answerOverhead = 32

// attach keeps the resolver's result as the answer, when it succeeded and
// fits its reply, and returns the objects it holds.
func (a *answer) attach(r Result) []*answered {
	if r.Err != nil {
		return nil
	}
	raw, err := encodeData(r.Data)
	if err != nil {
		return nil
	}
	room := a.parent.reply
	size := len(raw) + 2*len(a.key) + answerOverhead
	if size > room.bytes {
		return nil
	}
	objs, ok := objectsIn(raw, a.route, a.fields, room)
	if !ok {
		return nil
	}
	room.bytes -= size
	a.data, a.objs = raw, objs
	a.parent.answers = append(a.parent.answers, a)
	if prefetchMembers[a.route.Key()] != "" {
		a.parent.got += len(a.fields)
	}
	return objs
}

// objectsIn returns the objects in raw, a value of the route's field, with
// what fields (the occurrences of the field) select on them. raw is JSON
// this program encoded (or a source Decode validated), so it is walked
// without validating it again.
func objectsIn(raw json.RawMessage, route Route, fields []*appsync.Field, room *replyRoom) ([]*answered, bool) {
	var below []*appsync.Field
	hidden := false
	for _, f := range fields {
		hidden = hidden || hidesChildren(f.Selection)
		fs, h := objectFields(f.Selection, route)
		below, hidden = append(below, fs...), hidden || h
	}
	if hidden {
		return nil, true // a named fragment may select anything on them: no child answered
	}
	if !slices.ContainsFunc(below, func(f *appsync.Field) bool {
		r, ok := route.child(f.Name)
		return ok && r.EarlyReturn()
	}) {
		return nil, true // leaves: nothing below them to answer
	}
	var elems [][]byte
	add := func(v []byte) { elems = append(elems, v) }
	switch route.Shape {
	case One:
		elems = [][]byte{raw}
	case List:
		payload.EachElement(raw, add)
	case Connection:
		if items := payload.Members(raw, "items")[0]; items != nil && route.Member == "" {
			payload.EachElement(items, add)
		} else if items != nil {
			payload.EachElement(items, func(item []byte) { add(payload.Members(item, route.Member)[0]) })
		}
	}
	objs := make([]*answered, len(elems))
	for i, e := range elems {
		if len(e) > 0 && e[0] == '{' {
			objs[i] = &answered{raw: e, typ: route.Returns, fields: below, reply: room}
		}
	}
	return objs, true
}

// objectFields returns what set, the selection of a field of the route,
// selects on its objects (a page's on its items, or on its items' Member),
// and whether a named fragment hides some of it (hidesChildren).
func objectFields(set appsync.Selection, route Route) ([]*appsync.Field, bool) {
	if route.Shape != Connection {
		return set.Fields, false
	}
	var fields []*appsync.Field
	hidden := false
	for _, items := range set.Named("items") {
		hidden = hidden || hidesChildren(items.Selection)
		if route.Member == "" {
			fields = append(fields, items.Selection.Fields...)
			continue
		}
		for _, m := range items.Selection.Named(route.Member) {
			hidden = hidden || hidesChildren(m.Selection)
			fields = append(fields, m.Selection.Fields...)
		}
	}
	return fields, hidden
}

// appendAssembled appends raw, a value of a field of the given shape, to
// dst with the answers of the objects it holds, in one pass over raw.
func appendAssembled(dst []byte, raw json.RawMessage, route Route, objs []*answered) []byte {
	shape := route.Shape
	if !slices.ContainsFunc(objs, func(o *answered) bool { return o != nil && len(o.answers) > 0 }) {
		return append(dst, raw...)
	}
	if shape == One {
		return objs[0].appendTo(dst)
	}
	list := func(dst []byte) []byte {
		dst = append(dst, '[')
		for i, o := range objs {
			if i > 0 {
				dst = append(dst, ',')
			}
			if o == nil {
				dst = append(dst, "null"...) // objectsIn's nil: a null element
				continue
			}
			dst = o.appendTo(dst)
		}
		return append(dst, ']')
	}
	if shape == List {
		return list(dst)
	}
	if route.Member != "" {
		list = func(dst []byte) []byte { return appendItemsWithMember(dst, raw, route.Member, objs) }
	}
	// A page: its items replaced, the rest copied as it is.
	from := 0
	payload.Walk(raw, 0, func(key []byte, i int) int {
		end, _ := payload.Skip(raw, i)
		if string(key) == `"items"` {
			dst = list(append(dst, raw[from:i]...))
			from = end
		}
		return end
	})
	return append(dst, raw[from:]...)
}

// appendItemsWithMember appends the items of the page raw, each with its
// member holding the object objs has for it, with that object's answers.
func appendItemsWithMember(dst []byte, raw json.RawMessage, member string, objs []*answered) []byte {
	dst = append(dst, '[')
	i := 0
	if items := payload.Members(raw, "items")[0]; items != nil {
		payload.EachElement(items, func(item []byte) {
			if i > 0 {
				dst = append(dst, ',')
			}
			o := objs[i]
			i++
			if o == nil || len(o.answers) == 0 {
				dst = append(dst, item...)
				return
			}
			from := 0
			payload.Walk(item, 0, func(key []byte, at int) int {
				end, _ := payload.Skip(item, at)
				if string(key) == `"`+member+`"` {
					dst = o.appendTo(append(dst, item[from:at]...))
					from = end
				}
				return end
			})
			dst = append(dst, item[from:]...)
		})
	}
	return append(dst, ']')
}

// appendTo appends the object to dst with its answers, without the first
// page it prefetched for a child field whose every first-page occurrence
// now has an answer (it would be sent twice).
func (o *answered) appendTo(dst []byte) []byte {
	if len(o.answers) == 0 {
		return append(dst, o.raw...)
	}
	drop := ""
	for field, member := range prefetchMembers {
		if strings.HasPrefix(field, o.typ+".") && o.got == o.asked {
			drop = `"` + member + `"`
		}
	}
	start := len(dst)
	if drop == "" { // the object as it is, but for its closing brace
		obj := bytes.TrimRight(o.raw, " \t\r\n")
		dst = append(dst, obj[:len(obj)-1]...)
	} else {
		dst = append(dst, '{')
		payload.Walk(o.raw, 0, func(key []byte, i int) int {
			end, _ := payload.Skip(o.raw, i)
			if string(key) != drop {
				if len(dst) > start+1 {
					dst = append(dst, ',')
				}
				dst = append(append(append(dst, key...), ':'), o.raw[i:end]...)
			}
			return end
		})
	}
	if len(bytes.TrimSpace(dst[start+1:])) > 0 { // after a member
		dst = append(dst, ',')
	}
	dst = append(dst, `"`+AnswersMember+`":{`...)
	var defaulted []Route // the fields answered that have defaults
	for i, a := range o.answers {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendAssembled(append(payload.AppendString(dst, a.key), ':'), a.data, a.route, a.objs)
		if len(a.route.Defaults) > 0 && !slices.ContainsFunc(defaulted, func(r Route) bool { return r.Field == a.route.Field }) {
			defaulted = append(defaulted, a.route)
		}
	}
	dst = append(dst, '}')
	if len(defaulted) > 0 { // as encoding/json writes a map: by field
		sort.Slice(defaulted, func(i, j int) bool { return defaulted[i].Field < defaulted[j].Field })
		dst = append(dst, `,"`+defaultsMember+`":{`...)
		for i, r := range defaulted {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(append(payload.AppendString(dst, r.Field), ':'), r.defaultsJSON...)
		}
		dst = append(dst, '}')
	}
	return append(dst, '}')
}

// plan returns the answers the objects of a level ask for, by route, each
// with the event its resolver gets.
func plan(table *Routes, level []*answered) (map[string][]*answer, []string) {
	byRoute := map[string][]*answer{}
	var order []string
	type typedField struct {
		typ string
		f   *appsync.Field
	}
	fieldPlans := map[typedField]fieldPlan{}
	for _, p := range level {
		if p == nil {
			continue
		}
		var answers []*answer       // this object's, few: found by key in a loop
		var unknown map[string]bool // fields of which an occurrence's arguments cannot be known
		for _, f := range p.fields {
			if f.Unknown {
				if unknown == nil {
					unknown = map[string]bool{}
				}
				unknown[f.Name] = true
			}
		}
		for _, f := range p.fields {
			fp, seen := fieldPlans[typedField{p.typ, f}]
			if !seen { // the objects of a level share their selection's fields
				fp = planField(table, p.typ, f)
				fieldPlans[typedField{p.typ, f}] = fp
			}
			if !fp.firstPage {
				continue
			}
			if fp.prefetched {
				p.asked++
			}
			if !fp.answerable || unknown[f.Name] {
				continue // or an occurrence of the field whose key cannot be known
			}
			k := slices.IndexFunc(answers, func(a *answer) bool { return a.key == fp.key })
			if k < 0 {
				k = len(answers)
				answers = append(answers, &answer{key: fp.key, route: fp.route, parent: p})
				if _, seen := byRoute[fp.routeKey]; !seen {
					order = append(order, fp.routeKey)
				}
				byRoute[fp.routeKey] = append(byRoute[fp.routeKey], answers[k])
			}
			answers[k].fields = append(answers[k].fields, f)
		}
	}
	// The objects of a level mostly share their selection: each distinct
	// one is written once.
	type written struct {
		args json.RawMessage
		text string
	}
	memo := map[*appsync.Field]written{}
	for _, answers := range byRoute {
		for _, a := range answers {
			w, ok := memo[a.fields[0]]
			if !ok || len(a.fields) > 1 {
				args := map[string]any{}
				for name, v := range a.fields[0].Args {
					if v != nil {
						args[name] = v
					}
				}
				w.args, _ = payload.Marshal(args)
				w.text = appsync.SelectionText(a.fields...)
				if len(a.fields) == 1 {
					memo[a.fields[0]] = w
				}
			}
			a.ev = a.event(w.args, w.text)
		}
	}
	return byRoute, order
}

// fieldPlan is what plan learns of one field of a selection.
type fieldPlan struct {
	route      Route
	routeKey   string
	key        string // its AnswerKey
	firstPage  bool   // a field with a JavaScript resolver, not asking for a later page
	prefetched bool   // a field whose first page its parent may carry
	answerable bool   // a first page whose arguments are known
}

// planField plans the field f of an object of type typ.
func planField(table *Routes, typ string, f *appsync.Field) fieldPlan {
	route, ok := table.of(typ, f.Name)
	if !ok || !route.EarlyReturn() {
		return fieldPlan{}
	}
	if token, ok := f.Args["nextToken"]; ok && token != nil {
		return fieldPlan{} // a later page: its own invocation
	}
	fp := fieldPlan{route: route, routeKey: route.Key(), firstPage: true}
	fp.prefetched = prefetchMembers[fp.routeKey] != ""
	fp.key, ok = answerKey(f.Name, f.Args, route.Defaults)
	fp.answerable = ok && !f.Unknown
	return fp
}

// event is the event AppSync would send for the answer's field, with the
// arguments and selection text given.
func (a *answer) event(args json.RawMessage, text string) *appsync.Event {
	root := a.parent.reply.ev
	return &appsync.Event{
		Arguments: args,
		Identity:  root.Identity,
		Source:    a.parent.raw,
		Info: appsync.Info{
			FieldName:           a.route.Field,
			ParentTypeName:      a.route.Type,
			SelectionSetGraphQL: text,
			Variables:           root.Info.Variables,
		},
	}
}

// requestsBound is the most DynamoDB requests the route's resolver makes for
// n events, retries of unprocessed keys aside.
func requestsBound(r Route, n int) int {
	switch {
	case r.Shape == One && r.Returns == "User":
		return (2*n + 99) / 100 // one BatchGetItem per 100 distinct keys: a user's, and its counter's
	case r.Shape == One && r.Returns == "Boolean":
		return (n + 99) / 100 // Post.likedByMe: one BatchGetItem per 100 posts
	case r.Shape == Connection && r.Returns == "User":
		return 2 * n // a Query of the follows, then the users
	case r.Shape == Connection && (r.Returns == "Post" || r.Key() == "User.comments"):
		return 2 * n // a Query, then the posts' counters (or their existence)
	default:
		return n
	}
}

// answerKey is the key of the answer to field with args: the field's name,
// then "|name=value" for each argument neither null nor its default, in
// JSON. appsyncjs/child.js computes the same key; where it could differ, the
// child finds no answer and invokes.
func answerKey(field string, args, defaults map[string]any) (string, bool) {
	if len(args) == 0 {
		return field, true
	}
	names := make([]string, 0, len(args))
	for name, v := range args {
		if d, ok := defaults[name]; v != nil && !(ok && v == d) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString(field)
	for _, name := range names {
		v, err := payload.Marshal(args[name])
		if err != nil {
			return "", false
		}
		b.WriteString("|" + name + "=")
		b.Write(v)
	}
	return b.String(), true
}
