package resolver

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/example/appsync-dynamo/lambda/store"
)

// TestPostResultAppendJSON checks a post with its prefetched comments
// against encoding/json's reading of the same values: every member of the
// post, the prefetch as one more, and none for a post without one.
func TestPostResultAppendJSON(t *testing.T) {
	post := store.Post{ID: "p1", AuthorID: "u1", Title: "T <&>", Body: "b\u2028", CreatedAt: "c", UpdatedAt: "u", CommentCount: 2}
	comments := []store.Comment{{ID: "c1", PostID: "p1", AuthorID: "u2", Body: "\"hi\"", CreatedAt: "c"}}
	pre := store.Prefetch[store.Comment]{Parent: "p1", Items: comments, Complete: true, Args: "NEWEST_FIRST"}
	for _, r := range []postResult{{Post: post}, {Post: post, PrefetchedComments: &pre}} {
		got := r.AppendJSON([]byte("x"))
		if string(got[:1]) != "x" {
			t.Fatalf("dst overwritten: %s", got)
		}
		var gotV, wantV map[string]any
		if err := json.Unmarshal(got[1:], &gotV); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		want, _ := json.Marshal(post)
		json.Unmarshal(want, &wantV)
		if r.PrefetchedComments != nil {
			b, _ := json.Marshal(pre)
			var p any
			json.Unmarshal(b, &p)
			wantV["prefetchedComments"] = p
		}
		if !reflect.DeepEqual(gotV, wantV) {
			t.Errorf("AppendJSON = %s, want %v", got[1:], wantV)
		}
	}
}
