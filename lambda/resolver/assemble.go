package resolver

// Assembling a reply with answers: each answer kept when it fits its
// reply, the objects it holds found for the next level, and the result
// written with its answers into one buffer in one pass.

import (
	"bytes"
	"encoding/json"
	"slices"
	"sort"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
)

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
