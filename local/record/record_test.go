package record_test

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/record"
	"github.com/example/appsync-dynamo/local/storetest"
)

// tables counts the tables the tests create, each new on the shared
// DynamoDB Local (as with -count=20).
var tables atomic.Int64

// table returns the name of a table no test has created.
func table() string {
	return fmt.Sprintf("record-%d-%d", os.Getpid(), tables.Add(1))
}

// A root field's event is the one AppSync sends a direct Lambda resolver:
// the arguments, the caller and the selection as the query wrote them.
func TestARootFieldsEvent(t *testing.T) {
	raw, err := record.Event(t.Context(), storetest.Endpoint(t), table(), record.Request{
		Field: "Mutation.likePost", Caller: "carol",
		Query:     `mutation Like($post: ID!) { likePost(postId: $post) { id n: likeCount } }`,
		Variables: map[string]any{"post": "01HWMMR280YFZMTH8Y8AF1G8GN"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var ev appsync.Event
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatalf("%v:\n%s", err, raw)
	}
	var args struct{ PostID string }
	json.Unmarshal(ev.Arguments, &args)
	var list []string
	json.Unmarshal(ev.Info.SelectionSetList, &list)
	switch {
	case ev.Info.ParentTypeName != "Mutation" || ev.Info.FieldName != "likePost":
		t.Errorf("recorded %s.%s", ev.Info.ParentTypeName, ev.Info.FieldName)
	case args.PostID != "01HWMMR280YFZMTH8Y8AF1G8GN":
		t.Errorf("arguments %s", ev.Arguments)
	case ev.Identity.UserID() != "u_carol":
		t.Errorf("the caller is %q, want u_carol", ev.Identity.UserID())
	case !slices.Equal(list, []string{"id", "n"}) || ev.Info.SelectionSetGraphQL != "{\n  id\n  n: likeCount\n}":
		t.Errorf("the selection: %q, %q", list, ev.Info.SelectionSetGraphQL)
	case !strings.HasSuffix(string(raw), "}\n") || !strings.Contains(string(raw), "\n  \"arguments\": {"):
		t.Errorf("not indented JSON ending with a newline:\n%s", raw)
	}
}

// A batched child field's is the array appsyncjs/child.js sends, one event
// for each parent, as AppSync batches them: every comment's author.
func TestABatchedFieldsEvents(t *testing.T) {
	raw, err := record.Event(t.Context(), storetest.Endpoint(t), table(), record.Request{
		Field: "Comment.author",
		Query: `{ post(id: "01HWMMR280YFZMTH8Y8AF1G8GN") { comments { items { body author { name } } } } }`,
	})
	if err != nil {
		t.Fatal(err)
	}
	var batch []struct {
		Source struct {
			AuthorID string `json:"authorId"`
			Answers  any    `json:"_answers"`
		}
		Info appsync.Info
	}
	if err := json.Unmarshal(raw, &batch); err != nil {
		t.Fatalf("%v:\n%s", err, raw)
	}
	var authors []string
	for _, ev := range batch {
		authors = append(authors, ev.Source.AuthorID)
		if ev.Info.FieldName != "author" || ev.Source.Answers != nil {
			t.Errorf("an event of %s, its source with answers %v", ev.Info.FieldName, ev.Source.Answers)
		}
	}
	if !slices.Equal(authors, []string{"u_bob", "u_carol"}) {
		t.Errorf("the batch's sources are by %q, want the sample post's two comments'", authors)
	}
}

// A field the query does not resolve, or resolves without the Lambda, and a
// name that is no field, record nothing.
func TestNothingToRecord(t *testing.T) {
	for _, r := range []record.Request{
		{Field: "Post.author", Query: `{ post(id: "01HWMMR280YFZMTH8Y8AF1G8GN") { title } }`},
		{Field: "Post.title", Query: `{ post(id: "01HWMMR280YFZMTH8Y8AF1G8GN") { title } }`},
		{Field: "post", Query: `{ post(id: "01HWMMR280YFZMTH8Y8AF1G8GN") { title } }`},
		{Field: "Query.post", Query: `{ post(id: 1 }`},
	} {
		if raw, err := record.Event(t.Context(), storetest.Endpoint(t), table(), r); err == nil {
			t.Errorf("%s for %s: recorded\n%s", r.Field, r.Query, raw)
		}
	}
}
