package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// sameAnswer runs req on both layouts and fails unless the data and errors
// are equal; it returns the costs of the JavaScript layout and the direct one.
func sameAnswer(t *testing.T, js, direct *executor.Executor, req executor.Request) (map[string]any, executor.Cost, executor.Cost) {
	t.Helper()
	data, resp := run(t, js, req)
	want, wantResp := run(t, direct, req)
	if !reflect.DeepEqual(data, want) {
		a, _ := json.Marshal(data)
		b, _ := json.Marshal(want)
		t.Errorf("answers differ:\njs:     %s\ndirect: %s", a, b)
	}
	if len(resp.Errors) != len(wantResp.Errors) {
		t.Errorf("errors differ: js %+v, direct %+v", resp.Errors, wantResp.Errors)
	}
	for i := range min(len(resp.Errors), len(wantResp.Errors)) {
		if a, b := resp.Errors[i], wantResp.Errors[i]; a.ErrorType != b.ErrorType || a.Message != b.Message || !reflect.DeepEqual(a.Path, b.Path) {
			t.Errorf("error %d: js %+v, direct %+v", i, a, b)
		}
	}
	return data, resp.Extensions["cost"].(executor.Cost), wantResp.Extensions["cost"].(executor.Cost)
}

func requests(c executor.Cost) int {
	n := 0
	for _, k := range c.DynamoDB {
		n += k
	}
	return n
}

// The seed's query: the Lambda resolving Query.user answers every level
// below it, each level's requests at once, and every child's JavaScript
// resolver returns early: 1 invocation, 2 + posts + 1 requests, 4 round trips.
func TestSeedQueryInOneInvocation(t *testing.T) {
	d := sample.Blog(10, 20, 30)
	js, rec := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	data, cost, before := sameAnswer(t, js, direct, executor.Request{Query: seedQuery})
	posts := len(get(data, "user", "posts", "items").([]any))
	if cost.LambdaInvocations != 1 || requests(cost) != 2+posts+1 || cost.DynamoDBRoundTrips != 4 {
		t.Errorf("cost = %+v; want 1 invocation, %d requests, 4 round trips", cost, 2+posts+1)
	}
	if len(rec.payloads) != 1 {
		t.Errorf("%d payloads sent to the Lambda", len(rec.payloads))
	}
	t.Logf("%d posts; JavaScript resolvers: %+v; direct resolvers: %+v", posts, cost, before)
	// Under the first-occurrence reading (the Lambda's default), still one
	// invocation, with the same answer: each level is answered whole.
	first := []executor.Option{executor.WithSelectionReading(appsync.FirstOccurrence)}
	whole := []resolver.Option{resolver.WithSelectionReading(appsync.FirstOccurrence)}
	jsFirst, _ := setupWith(t, d, resolver.CoreRoutes, first, whole)
	directFirst, _ := setupWith(t, d, resolver.CoreRoutes, append(first, executor.WithDirectResolvers()), append(whole, resolver.WithoutAnswers()))
	if _, cost, _ := sameAnswer(t, jsFirst, directFirst, executor.Request{Query: seedQuery}); cost.LambdaInvocations != 1 {
		t.Errorf("first-occurrence reading: %+v; want 1 invocation", cost)
	}
}

const seedQuery = `{ user(handle: "alice") { name posts { items { title comments { items { body author { name } } } } } } }`

// A post with its comments and their authors: the post and its first
// comments in one Query, then the authors in one BatchGetItem.
func TestPostCommentsAuthorsInOneInvocation(t *testing.T) {
	d := sample.Blog(3, 20, 30)
	js, _ := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	_, cost, _ := sameAnswer(t, js, direct, executor.Request{Query: `{ post(id: "` + sample.HelloPost + `") { title comments { items { body author { name } } } } }`})
	if cost.LambdaInvocations != 1 || cost.DynamoDB["Query"] != 1 || cost.DynamoDB["BatchGetItem"] != 1 || requests(cost) != 2 || cost.DynamoDBRoundTrips != 2 {
		t.Errorf("cost = %+v; want 1 invocation, 1 Query and 1 BatchGetItem in 2 round trips", cost)
	}
}

// Aliases with other limits are other answers; a limit from a variable is
// known; what a named fragment selects, and a later page, are not answered:
// those children invoke the Lambda, and every answer is the direct layout's.
func TestWhatIsAnsweredAndWhatIsNot(t *testing.T) {
	d := sample.Blog(3, 5, 4)
	js, rec := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	post := `post(id: "` + d.Posts[len(d.Posts)-1].ID + `")` // with 5 comments

	_, cost, _ := sameAnswer(t, js, direct, executor.Request{Query: `query Q($n: Int) { ` + post + ` {
	  one: comments(limit: 1) { items { id author { handle } } nextToken }
	  two: comments(limit: 2) { items { body } }
	  vars: comments(limit: $n) { items { author { name } } }
	  again: comments(limit: 1) { items { createdAt } }
	} }`, Variables: map[string]any{"n": 3}})
	if cost.LambdaInvocations != 1 || cost.DynamoDB["Query"] != 1 {
		t.Errorf("aliases and a variable: %+v; want 1 invocation and 1 Query", cost)
	}

	rec.payloads = nil
	_, cost, _ = sameAnswer(t, js, direct, executor.Request{Query: `{ ` + post + ` { title ...More } }
	fragment More on Post { comments(limit: 2) { items { author { handle } } } }`})
	if n, _ := rec.events(t, "Post.comments"); n != 1 {
		t.Errorf("named fragment: Post.comments invoked %d times, want 1 (%+v)", n, cost)
	}

	first, _ := run(t, js, executor.Request{Query: `{ ` + post + ` { comments(limit: 2) { nextToken } } }`})
	token := get(first, "post", "comments", "nextToken")
	if token == nil {
		t.Fatal("no nextToken on a first page of 2 of 5 comments")
	}
	rec.payloads = nil
	data, cost, _ := sameAnswer(t, js, direct, executor.Request{Query: `query Q($t: String) { ` + post + ` { comments(limit: 2, nextToken: $t) { items { id author { handle } } } } }`,
		Variables: map[string]any{"t": token}})
	if n, evs := rec.events(t, "Post.comments"); n != 1 || len(evs) != 1 || len(get(data, "post", "comments", "items").([]any)) != 2 {
		t.Errorf("a later page: Post.comments invoked %d times (%d events), data %v, cost %+v", n, len(evs), data, cost)
	}
	if n, _ := rec.events(t, "Comment.author"); n != 0 {
		t.Errorf("a later page's authors: %d invocations, want 0 (answered by Post.comments)", n)
	}
}

// A child whose answer failed invokes the Lambda, whose error reaches the
// response as the direct layout reports it.
func TestAChildWithoutAnswerReportsItsError(t *testing.T) {
	d := sample.Data()
	d.Posts[0].AuthorID = "u_gone"
	js, _ := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	_, cost, _ := sameAnswer(t, js, direct, executor.Request{Query: `{ posts(ids: ["` + sample.HelloPost + `"]) { title author { handle } } }`})
	if cost.LambdaInvocations != 2 {
		t.Errorf("cost = %+v; want 2 invocations (Query.posts, then Post.author, which fails)", cost)
	}
}

// Many requests at once share the compiled resolver safely (run with -race).
func TestConcurrentRequests(t *testing.T) {
	js, _ := setup(t, sample.Blog(4, 10, 5), resolver.CoreRoutes)
	q := executor.Request{Query: `{ user(handle: "alice") { posts { items { title comments { items { author { name } } } } } } }`}
	want, _ := run(t, js, q)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			got, resp := run(t, js, q)
			if !reflect.DeepEqual(got, want) || resp.Extensions["cost"].(executor.Cost).LambdaInvocations != 1 {
				t.Errorf("concurrent request: %+v", resp.Extensions["cost"])
			}
		})
	}
	wg.Wait()
}

// The batch sizes, measured: with no answers from the parents (every child
// invokes the Lambda through the JavaScript resolver, with its lean
// events), each level of the seed's query on make dev's data is one
// invocation, and an event takes its source plus far less than
// payload.EventReserve.
func TestLeanBatchesOfTheSeedQuery(t *testing.T) {
	e, rec := setupWith(t, sample.Blog(10, 20, 30), resolver.CoreRoutes, nil, []resolver.Option{resolver.WithoutAnswers()})
	_, resp := run(t, e, executor.Request{Identity: signedIn(sample.Bob),
		Query: `{ user(handle: "alice") { name posts { items { title comments { items { body author { name } } } } } } }`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	for _, field := range []string{"Query.user", "User.posts", "Post.comments", "Comment.author"} {
		if n, _ := rec.events(t, field); n != 1 {
			t.Errorf("%s: %d invocations, want 1", field, n)
		}
	}
	for _, p := range rec.payloads {
		evs, batch, err := appsync.Decode(p)
		if err != nil || !batch {
			continue
		}
		sources := 0
		for _, ev := range evs {
			sources += len(ev.Source)
		}
		overhead := (len(p) - sources) / len(evs)
		t.Logf("%s: %d events, %d bytes, %d bytes per event besides its source", evs[0].Info.Field(), len(evs), len(p), overhead)
		if overhead > payload.EventReserve {
			t.Errorf("%s: %d bytes per event besides the source, more than EventReserve (%d)", evs[0].Info.Field(), overhead, payload.EventReserve)
		}
		if evs[0].Request != nil || strings.Contains(string(evs[0].Source), resolver.AnswersMember) {
			t.Errorf("%s: the event carries what the Lambda never reads: %s", evs[0].Info.Field(), p[:min(len(p), 600)])
		}
	}
}

// onBatchGet is client middleware that runs fault before every
// BatchGetItem: returning an error fails the call, sleeping delays it.
func onBatchGet(fault func(ctx context.Context) error) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test.onBatchGet",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if _, ok := in.Parameters.(*dynamodb.BatchGetItemInput); ok {
						if err := fault(ctx); err != nil {
							return middleware.InitializeOutput{}, middleware.Metadata{}, err
						}
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before)
		})
	}
}

// setupFaulty is setup over a client with optFns (faults).
func setupFaulty(t *testing.T, data store.Dataset, optFns func(*dynamodb.Options), opts ...executor.Option) *executor.Executor {
	t.Helper()
	base, _ := storetest.NewStore(t, data)
	s := store.New(storetest.Client(t, optFns), base.Table(), cursor.New(storetest.TokenKey))
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		t.Fatal(err)
	}
	h := resolver.New(s, testLog(t), append(wired.Options(s), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))...)
	return executor.New(sch, lambda.NewHandler(h), h.Routes().All(), opts...)
}

// DynamoDB failing while a parent answers its children: nothing is attached,
// the children invoke the Lambda, and their errors reach the response with
// their errorType; the parent's own data still comes back.
func TestAnswersWhenDynamoDBFails(t *testing.T) {
	d := sample.Blog(2, 5, 3)
	e := setupFaulty(t, d, onBatchGet(func(context.Context) error {
		return &types.ProvisionedThroughputExceededException{Message: aws.String("throttled (injected)")}
	}))
	post := d.Posts[len(d.Posts)-1].ID
	data, resp := run(t, e, executor.Request{Query: `{ post(id: "` + post + `") { title comments { items { body } } author { name } } }`})
	cost := resp.Extensions["cost"].(executor.Cost)
	if cost.LambdaInvocations != 2 || len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Throttled" ||
		fmt.Sprint(resp.Errors[0].Path) != "[post author]" {
		t.Errorf("errors %+v, cost %+v", resp.Errors, cost)
	}
	// post.author is User!: the post is null; the comments were read (one Query) before.
	if data["post"] != nil || cost.DynamoDB["Query"] != 1 {
		t.Errorf("data %v, cost %+v", data, cost)
	}
}

// DynamoDB slow while a parent answers its children: the answers it cannot
// finish by its time budget are given up, the reply goes out before the
// function's timeout, and the children invoke the Lambda: the answer is
// complete and correct, only slower.
func TestAnswersWhenDynamoDBIsSlow(t *testing.T) {
	d := sample.Blog(2, 5, 3)
	e := setupFaulty(t, d, onBatchGet(func(ctx context.Context) error {
		select {
		case <-time.After(1500 * time.Millisecond):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}), executor.WithTimeouts(executor.RequestTimeout, 2*time.Second))
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	post := d.Posts[len(d.Posts)-1].ID
	q := executor.Request{Query: `{ post(id: "` + post + `") { title comments { items { body author { name } } } } }`}
	data, resp := run(t, e, q)
	want, _ := run(t, direct, q)
	cost := resp.Extensions["cost"].(executor.Cost)
	if len(resp.Errors) > 0 || !reflect.DeepEqual(data, want) || cost.LambdaInvocations != 2 {
		t.Errorf("errors %+v, cost %+v\ndata %v\nwant %v", resp.Errors, cost, data, want)
	}
}

// A committed mutation's answers are optional work with a small budget: the
// BatchGetItem of a new comment's author, hanging, is given up 500 ms after
// the write (its context's deadline says so), the reply goes out, and
// Comment.author invokes on its own and answers.
func TestACommittedMutationAnswersWithinItsBudget(t *testing.T) {
	d := sample.Blog(1, 2, 2)
	var calls atomic.Int32
	var left time.Duration // what the first BatchGetItem's context had left
	e := setupFaulty(t, d, onBatchGet(func(ctx context.Context) error {
		if calls.Add(1) > 1 {
			return nil
		}
		deadline, _ := ctx.Deadline()
		left = time.Until(deadline)
		<-ctx.Done()
		return ctx.Err()
	}))
	post := d.Posts[len(d.Posts)-1].ID
	data, resp := run(t, e, executor.Request{Identity: signedIn(sample.Bob), Query: `mutation { createComment(input: {postId: "` + post + `", body: "hi"}) { body author { name } } }`})
	cost := resp.Extensions["cost"].(executor.Cost)
	if len(resp.Errors) > 0 || get(data, "createComment", "author", "name") != "Bob" || cost.LambdaInvocations != 2 {
		t.Errorf("data %v, errors %+v, cost %+v", data, resp.Errors, cost)
	}
	if left <= 0 || left > 500*time.Millisecond {
		t.Errorf("the answer's BatchGetItem had %v left; want at most 500ms", left)
	}
}

// Round trips count what waited, not when it ran: with every other Query of
// a level held back 50 ms before it is sent (as a loaded machine may start
// one goroutine only after another's request has ended), the seed's query is
// still 4 round trips, its levels' requests having been made together.
func TestRoundTripsCountWhatWaitedNotWhenItRan(t *testing.T) {
	d := sample.Blog(4, 3, 3)
	var queries atomic.Int32
	hold := func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
			return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test.holdQuery",
				func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
					if _, ok := in.Parameters.(*dynamodb.QueryInput); ok && queries.Add(1)%2 == 0 {
						time.Sleep(50 * time.Millisecond)
					}
					return next.HandleInitialize(ctx, in)
				}), middleware.Before) // before the cost middleware takes the start time
		})
	}
	e := setupFaulty(t, d, hold)
	_, resp := run(t, e, executor.Request{Query: `{ user(handle: "alice") { name posts { items { title comments { items { body author { name } } } } } } }`})
	cost := resp.Extensions["cost"].(executor.Cost)
	if len(resp.Errors) > 0 || cost.DynamoDBRoundTrips != 4 || cost.LambdaInvocations != 1 {
		t.Errorf("errors %+v, cost %+v; want 4 round trips in 1 invocation", resp.Errors, cost)
	}
}
