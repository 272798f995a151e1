package resolver

// Planning a level of answers: which child fields of the level's objects
// are answered, grouped by route, each with the event its resolver would get
// from AppSync.

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
)

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
