package resolver

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestAppendAssembled writes answers into objects, pages and lists, one
// inside another, and compares the result, as JSON values, with what it
// should be: every member kept in place, the answers and the defaults added,
// a prefetch dropped only when every first-page occurrence was answered.
func TestAppendAssembled(t *testing.T) {
	// The core's routes, and a feature's whose items carry their post as
	// "post" (lambda/trending's Query.trending is one).
	members := NewRoutes([]Route{{Type: "Query", Field: "ranking", Returns: "Post", Shape: Connection, Member: "post"}})
	route := func(typ, field string) Route {
		r, ok := members.of(typ, field)
		if !ok {
			t.Fatalf("no route %s.%s", typ, field)
		}
		return r
	}
	postComments, commentAuthor, userPosts := route("Post", "comments"), route("Comment", "author"), route("User", "posts")
	user := func(name string) json.RawMessage {
		return json.RawMessage(`{"id":"` + name + `","name":"` + name + `"}`)
	}
	comment := func(id, author string) *answered {
		c := &answered{raw: json.RawMessage(`{"id":"` + id + `","authorId":"` + author + `","body":"a \"quoted\" } body"}`), typ: "Comment"}
		c.answers = []*answer{{key: "author", route: commentAuthor, data: user(author), objs: []*answered{{raw: user(author), typ: "User"}}}}
		return c
	}
	page := json.RawMessage(`{"nextToken":null,"items":[{"id":"c1"},null,{"id":"c2"}],"x":{"items":1}}`)
	comments := []*answered{comment("c1", "u1"), nil, comment("c2", "u2")}
	post := func(asked, got int) *answered {
		return &answered{raw: json.RawMessage(`{"id":"p1","prefetchedComments":{"items":[]},"title":"T"}`), typ: "Post", asked: asked, got: got,
			answers: []*answer{
				{key: "comments|limit=2", route: postComments, data: page, objs: comments},
				{key: "comments", route: postComments, data: json.RawMessage(`{"items":[],"nextToken":null}`)},
			}}
	}
	answeredComments := `{"comments|limit=2":{"nextToken":null,"items":[` +
		`{"id":"c1","authorId":"u1","body":"a \"quoted\" } body","_answers":{"author":{"id":"u1","name":"u1"}}},null,` +
		`{"id":"c2","authorId":"u2","body":"a \"quoted\" } body","_answers":{"author":{"id":"u2","name":"u2"}}}],"x":{"items":1}},` +
		`"comments":{"items":[],"nextToken":null}}`
	defaults := `{"comments":{"order":"OLDEST_FIRST"}}`
	one, list, connection := Route{Shape: One}, Route{Shape: List}, Route{Shape: Connection}
	for _, c := range []struct {
		name  string
		route Route
		raw   json.RawMessage
		objs  []*answered
		want  string
	}{
		{"every occurrence answered: the prefetch dropped", one, json.RawMessage(`{}`), []*answered{post(2, 2)},
			`{"id":"p1","title":"T","_answers":` + answeredComments + `,"_defaults":` + defaults + `}`},
		{"one occurrence left to invoke: the prefetch kept", one, json.RawMessage(`{}`), []*answered{post(3, 2)},
			`{"id":"p1","prefetchedComments":{"items":[]},"title":"T","_answers":` + answeredComments + `,"_defaults":` + defaults + `}`},
		{"a page of posts", connection, json.RawMessage(`{"items":[{},{"id":"p2"}],"nextToken":"t"}`),
			[]*answered{post(2, 2), {raw: json.RawMessage(`{"id":"p2"}`), typ: "Post"}},
			`{"items":[{"id":"p1","title":"T","_answers":` + answeredComments + `,"_defaults":` + defaults + `},{"id":"p2"}],"nextToken":"t"}`},
		{"a ranking: each item's post answered in place", route("Query", "ranking"),
			json.RawMessage(`{"items":[{"score":2,"post":{},"likeCount":1},{"score":1,"post":{"id":"p2"}}]}`),
			[]*answered{post(2, 2), {raw: json.RawMessage(`{"id":"p2"}`), typ: "Post"}},
			`{"items":[{"score":2,"post":{"id":"p1","title":"T","_answers":` + answeredComments + `,"_defaults":` + defaults + `},"likeCount":1},{"score":1,"post":{"id":"p2"}}]}`},
		{"a list with nothing answered is kept as it is", list, json.RawMessage(` [ {"id":"p2"} ] `),
			[]*answered{{raw: json.RawMessage(`{"id":"p2"}`), typ: "Post"}}, ` [ {"id":"p2"} ] `},
		{"an empty comment (no prefetch to drop)", one, json.RawMessage(`{}`),
			[]*answered{{raw: json.RawMessage(`{ }`), typ: "Comment", answers: []*answer{{key: "author", route: commentAuthor, data: json.RawMessage(`null`)}}}},
			`{"_answers":{"author":null}}`},
		{"an empty object", one, json.RawMessage(`{}`),
			[]*answered{{raw: json.RawMessage(`{}`), typ: "User", answers: []*answer{{key: "posts", route: userPosts, data: json.RawMessage(`null`)}}}},
			`{"_answers":{"posts":null},"_defaults":{"posts":{"order":"NEWEST_FIRST","status":"PUBLISHED"}}}`},
	} {
		got := appendAssembled([]byte("prefix"), c.raw, c.route, c.objs)
		if string(got[:6]) != "prefix" {
			t.Errorf("%s: dst overwritten: %s", c.name, got)
			continue
		}
		var gotV, wantV any
		if err := json.Unmarshal(got[6:], &gotV); err != nil {
			t.Errorf("%s: invalid JSON %s: %v", c.name, got[6:], err)
			continue
		}
		if err := json.Unmarshal([]byte(c.want), &wantV); err != nil {
			t.Fatalf("%s: bad want: %v", c.name, err)
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("%s:\n got %s\nwant %s", c.name, got[6:], c.want)
		}
	}
}
