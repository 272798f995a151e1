package store

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// referenceMarshal is how a partial entity was encoded before AppendJSON:
// encoding/json on the struct, leaving out the members whose attribute was
// not read (every member read when a is nil), a nil list as [] (the
// schema's lists are never null).
func referenceMarshal(a attributes, v any) []byte {
	rv := reflect.New(reflect.TypeOf(v)).Elem()
	rv.Set(reflect.ValueOf(v))
	for i := range rv.NumField() {
		if f := rv.Field(i); f.Kind() == reflect.Slice && f.IsNil() && f.CanSet() {
			f.Set(reflect.MakeSlice(f.Type(), 0, 0))
		}
	}
	if a == nil {
		b, _ := payload.Marshal(rv.Interface())
		return b
	}
	buf := []byte{'{'}
	for i := range rv.NumField() {
		name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
		if name == "" || name == "-" || !slices.Contains(a, name) {
			continue
		}
		val, _ := payload.Marshal(rv.Field(i).Interface())
		if len(buf) > 1 {
			buf = append(buf, ',')
		}
		buf = append(append(append(append(buf, '"'), name...), '"', ':'), val...)
	}
	return append(buf, '}')
}

// readSet picks, by the bits of mask, which of names were read; bit 31
// set means every attribute (nil).
func readSet(mask uint32, names ...string) attributes {
	if mask&(1<<31) != 0 {
		return nil
	}
	a := attributes{}
	for i, n := range names {
		if mask&(1<<i) != 0 {
			a = append(a, n)
		}
	}
	return a
}

// FuzzPostAndCommentAppendJSON compares AppendJSON with encoding/json (via
// referenceMarshal) on posts and comments read with any projection, with
// strings that need escaping, and their prefetch with encoding/json's.
func FuzzPostAndCommentAppendJSON(f *testing.F) {
	f.Add("p1", "u_alice", "Title <A&B>", "body\u2028\xff\"\\", "2024-05-01T00:00:00.000Z", "", 3, uint32(1<<31), uint32(5), "args")
	f.Add("", "", "", "", "", "DRAFT", -1, uint32(0), uint32(0xff), "")
	f.Fuzz(func(t *testing.T, id, author, title, body, at, status string, count int, postMask, commentMask uint32, args string) {
		p := Post{ID: id, AuthorID: author, Title: title, Body: body, CreatedAt: at, UpdatedAt: at, CommentCount: count, Status: status,
			read: readSet(postMask, schemaAttributes[Post]()...)}
		type plainPost Post
		withStatus := p
		if withStatus.Status == "" {
			withStatus.Status = StatusPublished
		}
		if got, want := p.AppendJSON(nil), referenceMarshal(p.read, plainPost(withStatus)); string(got) != string(want) {
			t.Fatalf("Post.AppendJSON = %s\nreference      = %s", got, want)
		}
		c := Comment{ID: id, PostID: title, AuthorID: author, Body: body, CreatedAt: at,
			read: readSet(commentMask, schemaAttributes[Comment]()...)}
		type plainComment Comment
		if got, want := c.AppendJSON(nil), referenceMarshal(c.read, plainComment(c)); string(got) != string(want) {
			t.Fatalf("Comment.AppendJSON = %s\nreference         = %s", got, want)
		}
		for _, pre := range []Prefetch[Comment]{{Parent: id, Items: []Comment{c, c}, Complete: count%2 == 0, Limit: count, Args: args}, {Parent: id}} {
			want, err := json.Marshal(pre)
			if err != nil {
				t.Fatal(err)
			}
			var wantV, gotV any
			json.Unmarshal(want, &wantV)
			got := pre.AppendJSON(nil, Comment.AppendJSON)
			if err := json.Unmarshal(got, &gotV); err != nil || !reflect.DeepEqual(gotV, wantV) {
				t.Fatalf("Prefetch.AppendJSON = %s (%v)\nencoding/json       = %s", got, err, want)
			}
		}
	})
}
