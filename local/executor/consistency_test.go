package executor_test

import (
	"io"
	"log/slog"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/capacity"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/schema"
)

// A mutation's answers read what its write wrote: every read of the table
// that answers the mutation's selection (the comment's post and its
// commentCount, its author) is strongly consistent, as DynamoDB's
// eventually consistent reads may not see a write yet (DynamoDB Local
// always does, so the reads are checked, not the answer alone). A query's
// reads stay eventually consistent (half the read units).
func TestAMutationsAnswersReadConsistently(t *testing.T) {
	client := storetest.Client(t)
	table := storetest.NewTable(t, client)
	if err := store.New(client, table, cursor.New(storetest.TokenKey)).Load(t.Context(), sample.Data()); err != nil {
		t.Fatal(err)
	}
	rec := capacity.NewRecorder(client, table)
	s := store.New(rec, table, cursor.New(storetest.TokenKey))
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	e := executor.New(sch, lambda.NewHandler(resolver.New(s, slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))), resolver.CoreRoutes)
	post := sample.Data().Posts[0]

	reads := func(req executor.Request) (consistent, eventual int, data map[string]any) {
		t.Helper()
		rec.Take()
		data, resp := run(t, e, req)
		if len(resp.Errors) > 0 {
			t.Fatalf("%s: %v", req.Query, resp.Errors)
		}
		for _, r := range rec.Take() {
			if r.Operation == "Query" && r.Index != "" || len(r.Reads) == 0 {
				continue // an index (never consistent), or a write
			}
			if r.Consistent {
				consistent++
			} else {
				eventual++
			}
		}
		return consistent, eventual, data
	}
	mutation := executor.Request{Identity: signedIn(sample.Carol), Query: `mutation { createComment(input: {postId: "` + post.ID + `", body: "read me"}) { id post { title commentCount author { name } } author { name } } }`}
	consistent, eventual, data := reads(mutation)
	if eventual > 0 || consistent == 0 {
		t.Errorf("the mutation's answers: %d consistent reads, %d eventually consistent; want them all consistent", consistent, eventual)
	}
	if got := get(data, "createComment", "post", "commentCount"); got != float64(post.CommentCount+1) {
		t.Errorf("commentCount %v after the comment, want %d", got, post.CommentCount+1)
	}
	query := executor.Request{Identity: signedIn(sample.Carol), Query: `{ post(id: "` + post.ID + `") { title commentCount author { name } comments { items { author { name } } } } }`}
	if consistent, eventual, _ := reads(query); consistent > 0 || eventual == 0 {
		t.Errorf("a query: %d consistent reads, %d eventually consistent; want them eventually consistent", consistent, eventual)
	}
}
