package executor_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/smithy-go"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/schema"
)

// A deletePost whose sweep fails after the post's deletion committed
// answers as committed, and the comments it left are not listed where their
// post is selected: every commenter's User.comments { items { post { title }
// } } resolves. A later deletePost sweeps them.
func TestACommittedDeleteAnswersAsCommittedAndItsOrphansAreNotListed(t *testing.T) {
	seeded, client := storetest.NewStore(t, sample.Data())
	refused := &smithy.GenericAPIError{Code: "ValidationException", Message: "refused", Fault: smithy.FaultClient}
	broken := store.New(storetest.FailingBatchWrites{API: client, Err: refused}, seeded.Table(), cursor.New(storetest.TokenKey))
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	newAPI := func(s *store.Store) *executor.Executor {
		return executor.New(sch, lambda.NewHandler(resolver.New(s, quiet, resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))), resolver.CoreRoutes)
	}
	api := newAPI(broken)

	data, resp := run(t, api, executor.Request{Query: `mutation { deletePost(id: "` + sample.HelloPost + `") { id title } }`, Identity: signedIn(sample.Alice)})
	if len(resp.Errors) != 0 || get(data, "deletePost", "id") != sample.HelloPost {
		t.Fatalf("deletePost with a failing sweep: %v %+v; want the deleted post, no error", data, resp.Errors)
	}
	if n := storetest.Count(t, client, seeded.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix); n != 2 {
		t.Fatalf("%d comments left; the test needs the sweep to have failed", n)
	}
	for _, layout := range []*executor.Executor{api, newAPI(seeded)} {
		for _, handle := range []string{"bob", "carol"} {
			q := `{ user(handle: "` + handle + `") { handle comments { items { body post { title } } } } }`
			data, resp := run(t, layout, executor.Request{Query: q})
			if len(resp.Errors) != 0 || get(data, "user", "handle") != handle {
				t.Errorf("%s: %v %+v", q, data, resp.Errors)
			}
			if items := get(data, "user", "comments", "items").([]any); len(items) != 0 {
				t.Errorf("%s lists %d comments on a deleted post", handle, len(items))
			}
		}
	}
	// Without the post selected, the comments are listed: nothing fails there.
	data, _ = run(t, api, executor.Request{Query: `{ user(handle: "bob") { comments { items { body } } } }`})
	if items := get(data, "user", "comments", "items").([]any); len(items) != 1 {
		t.Errorf("bob's comments without their posts: %v", data)
	}
	_, resp = run(t, newAPI(seeded), executor.Request{Query: `mutation { deletePost(id: "` + sample.HelloPost + `") { id } }`, Identity: signedIn(sample.Alice)})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "NotFound" {
		t.Errorf("deletePost again: %+v; want NotFound", resp.Errors)
	}
	if n := storetest.Count(t, client, seeded.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", ""); n != 0 {
		t.Errorf("%d items left in the post's partition after deletePost again", n)
	}
}
