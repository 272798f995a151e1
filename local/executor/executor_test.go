package executor_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// recorder is the real handler, recording every payload it is sent.
type recorder struct {
	h        lambda.Handler
	mu       sync.Mutex
	payloads [][]byte
}

func (r *recorder) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	r.mu.Lock()
	r.payloads = append(r.payloads, append([]byte(nil), payload...))
	r.mu.Unlock()
	return r.h.Invoke(ctx, payload)
}

// events returns the events of the recorded invocations for a field.
func (r *recorder) events(t *testing.T, field string) (invocations int, events []appsync.Event) {
	t.Helper()
	for _, p := range r.payloads {
		evs, _, err := appsync.Decode(p)
		if err != nil {
			t.Fatal(err)
		}
		if evs[0].Info.Field() == field {
			invocations++
			events = append(events, evs...)
		}
	}
	return invocations, events
}

// bytesNotTime is for tests of what a query answers at AppSync's and
// Lambda's limits on size: the request gets two minutes and each invocation
// one, not AppSync's 30 s and the function's 10 s. Under the race detector on
// two cores shared with other test binaries, the largest of them have run
// past 30 s (32 posts' 3,200 comments through a named fragment, beside a
// second executor binary) where AWS serves them in a few seconds; the time
// limits have tests of their own (faults_test.go).
var bytesNotTime = executor.WithTimeouts(2*time.Minute, time.Minute)

// setup returns the local AppSync as the stack deploys it (JavaScript
// resolvers on child fields) over the Lambda handler, on a table of data.
func setup(t *testing.T, data store.Dataset, rs []resolver.Route, opts ...executor.Option) (*executor.Executor, *recorder) {
	t.Helper()
	return setupWith(t, data, rs, opts, nil)
}

// setupDirect returns the layout before the JavaScript resolvers: direct
// Lambda resolvers on every field, replies without answers for children.
func setupDirect(t *testing.T, data store.Dataset, rs []resolver.Route, opts ...executor.Option) (*executor.Executor, *recorder) {
	t.Helper()
	return setupWith(t, data, rs, append(opts, executor.WithDirectResolvers()), []resolver.Option{resolver.WithoutAnswers()})
}

func setupWith(t *testing.T, data store.Dataset, rs []resolver.Route, opts []executor.Option, hopts []resolver.Option) (*executor.Executor, *recorder) {
	t.Helper()
	e, rec, _ := setupStore(t, data, rs, opts, hopts)
	return e, rec
}

// testLog is a logger to t's output, which go test shows when t fails (or
// under -v): a field's "internal error" then comes with its cause. What is
// logged after t ends is dropped.
func testLog(t *testing.T) *slog.Logger {
	w := &endingWriter{w: t.Output()}
	t.Cleanup(func() { w.mu.Lock(); w.ended = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, nil))
}

// endingWriter writes to w until ended.
type endingWriter struct {
	mu    sync.Mutex
	w     io.Writer
	ended bool
}

func (e *endingWriter) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ended {
		return len(p), nil
	}
	return e.w.Write(p)
}

// setupStore is setupWith, returning the store too.
func setupStore(t *testing.T, data store.Dataset, rs []resolver.Route, opts []executor.Option, hopts []resolver.Option, onStore ...func(*store.Store) resolver.Option) (*executor.Executor, *recorder, *store.Store) {
	t.Helper()
	s, _ := storetest.NewStore(t, data, wired.Store...)
	for _, o := range onStore {
		hopts = append(hopts, o(s))
	}
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: lambda.NewHandler(resolver.New(s, testLog(t), slices.Concat(wired.Options(s), []resolver.Option{resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence)}, hopts)...))}
	return executor.New(sch, rec, slices.Concat(rs, wired.Routes), opts...), rec, s
}

func run(t *testing.T, e *executor.Executor, req executor.Request) (data map[string]any, resp executor.Response) {
	t.Helper()
	resp = e.Execute(context.Background(), req)
	b, err := json.Marshal(resp.Data)
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(b, &data)
	return data, resp
}

func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

// With direct Lambda resolvers on every field (the layout before the
// JavaScript child resolvers), one invocation per level and batch.
func TestSeedQueryDirectResolvers(t *testing.T) {
	e, rec := setupDirect(t, sample.Blog(10, 20, 30), resolver.CoreRoutes)
	data, resp := run(t, e, executor.Request{Query: `{
	  user(id: "u_alice") { name posts { items { title comments { items { body author { name } } } } } }
	}`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if get(data, "user", "name") != "Alice" || get(data, "user", "posts", "items", 0, "title") != "Post 10" {
		t.Errorf("data = %v", data)
	}
	comments := get(data, "user", "posts", "items", 0, "comments", "items").([]any)
	if len(comments) != 20 || get(comments[0], "author", "name") == nil {
		t.Errorf("comments = %v", comments)
	}
	cost := resp.Extensions["cost"].(executor.Cost)
	// One invocation per level: user, posts, comments (11 posts: 1 batch of 20), authors (202 comments: 1 batch of 250).
	if n, _ := rec.events(t, "Post.comments"); n != 1 {
		t.Errorf("Post.comments invoked %d times, want 1 (a batch of 11)", n)
	}
	if n, evs := rec.events(t, "Comment.author"); n != 1 || len(evs) != 11*20-20+2 {
		t.Errorf("Comment.author: %d invocations of %d events", n, len(evs))
	}
	t.Logf("seed query: %+v", cost)
}

func TestAliasesFragmentsVariables(t *testing.T) {
	e, rec := setup(t, sample.Data(), resolver.CoreRoutes)
	data, resp := run(t, e, executor.Request{
		Query: `query Q($handle: String = "bob", $n: Int) {
		  a: user(id: "u_alice") { ...Who }
		  b: user(handle: $handle) { ... on User { handle } who: name }
		  post(id: "` + sample.HelloPost + `") { __typename comments(limit: $n) { items { body } } }
		}
		fragment Who on User { handle displayName: name }`,
		Variables: map[string]any{"n": 1},
	})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if get(data, "a", "displayName") != "Alice" || get(data, "b", "handle") != "bob" || get(data, "b", "who") != "Bob" {
		t.Errorf("aliases/fragments: %v", data)
	}
	if get(data, "post", "__typename") != "Post" || len(get(data, "post", "comments", "items").([]any)) != 1 {
		t.Errorf("variables: %v", data)
	}
	_, evs := rec.events(t, "Query.user")
	for _, ev := range evs {
		if ev.Info.SelectionSetGraphQL == "{\n  ...Who\n}" {
			var list []string
			json.Unmarshal(ev.Info.SelectionSetList, &list)
			if strings.Join(list, ",") != "handle,displayName" {
				t.Errorf("named fragment: selectionSetList = %v, want expanded with aliases", ev.Info.SelectionSetList)
			}
		}
	}
	_, evs = rec.events(t, "Query.post")
	want := "{\n  __typename\n  comments(limit: $n) {\n    items {\n      body\n    }\n  }\n}"
	if len(evs) != 1 || evs[0].Info.SelectionSetGraphQL != want || string(evs[0].Info.Variables) != `{"handle":"bob","n":1}` {
		t.Errorf("Query.post info = %q, variables %s", evs[0].Info.SelectionSetGraphQL, evs[0].Info.Variables)
	}
}

func TestBatchingBoundaries(t *testing.T) {
	d := sample.Data()
	var ids []string
	for i := range 7 {
		id := fmt.Sprintf("01HWP00000000000000000000%d", i)
		ids = append(ids, fmt.Sprintf("%q", id))
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: sample.Bob, Title: "t", Body: "b", CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z"})
	}
	rs := append([]resolver.Route(nil), resolver.CoreRoutes...)
	for i := range rs {
		if rs[i].Key() == "Post.author" {
			rs[i].MaxBatchSize = 3
		}
	}
	e, rec := setupDirect(t, d, rs)
	data, resp := run(t, e, executor.Request{Query: `{ posts(ids: [` + strings.Join(ids, ",") + `]) { author { handle } } }`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if n, evs := rec.events(t, "Post.author"); n != 3 || len(evs) != 7 {
		t.Errorf("Post.author: %d invocations with %d events, want 3 with 7", n, len(evs))
	}
	if get(data, "posts", 6, "author", "handle") != "bob" {
		t.Errorf("data = %v", data)
	}
}

func TestNullPropagationAndErrors(t *testing.T) {
	d := sample.Data()
	d.Posts = append(d.Posts, store.Post{ID: "01HWORPHAN0000000000000000", AuthorID: "u_gone", Title: "Orphan", Body: "b",
		CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z"})
	e, _ := setup(t, d, resolver.CoreRoutes)
	data, resp := run(t, e, executor.Request{Query: `{ posts(ids: ["` + sample.HelloPost + `", "01HWORPHAN0000000000000000"]) { title author { handle } } }`})
	// Post.author is User!: the orphan's error nulls the post, which [Post] allows.
	if get(data, "posts", 0, "author", "handle") != "alice" || get(data, "posts", 1) != nil || len(data["posts"].([]any)) != 2 {
		t.Errorf("data = %v", data)
	}
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "NotFound" || fmt.Sprint(resp.Errors[0].Path) != "[posts 1 author]" || len(resp.Errors[0].Locations) != 1 {
		t.Errorf("errors = %+v", resp.Errors)
	}

	// A root error: me without identity.
	data, resp = run(t, e, executor.Request{Query: `{ me { id } post(id: "` + sample.HelloPost + `") { title } }`})
	if data["me"] != nil || get(data, "post", "title") != "Hello" || len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Unauthorized" {
		t.Errorf("data %v, errors %+v", data, resp.Errors)
	}

	// Invalid queries are refused before any invocation.
	_, resp = run(t, e, executor.Request{Query: `{ post(id: "x") { nope } }`})
	if resp.Data != nil || len(resp.Errors) != 1 || resp.Extensions["cost"].(executor.Cost).LambdaInvocations != 0 {
		t.Errorf("invalid query: %+v", resp)
	}
}

func TestMutationsRunInOrder(t *testing.T) {
	e, rec := setupDirect(t, sample.Data(), resolver.CoreRoutes)
	carol := &appsync.Identity{Sub: sample.Carol, Username: "carol"}
	data, resp := run(t, e, executor.Request{Identity: carol, Query: `mutation {
	  first: createComment(input: {postId: "` + sample.HelloPost + `", body: "one"}) { body post { commentCount } }
	  second: createComment(input: {postId: "` + sample.HelloPost + `", body: "two"}) { body post { commentCount } }
	  follow(userId: "u_alice") { followed { handle followerCount } }
	}`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if get(data, "first", "post", "commentCount") != float64(3) || get(data, "second", "post", "commentCount") != float64(4) ||
		get(data, "follow", "followed", "followerCount") != float64(1) {
		t.Errorf("data = %v", data)
	}
	var fields []string
	for _, p := range rec.payloads {
		evs, _, _ := appsync.Decode(p)
		fields = append(fields, evs[0].Info.Field())
	}
	if got := strings.Join(fields, " "); got != "Mutation.createComment Comment.post Mutation.createComment Comment.post Mutation.follow Follow.followed" {
		t.Errorf("invocation order = %s", got)
	}
}

// A mutation stops at its first field whose error nulls data: no later
// field runs or writes. An error that nulls only its own (nullable) field
// does not stop it.
func TestAMutationStopsAtItsFirstNullingError(t *testing.T) {
	e, rec := setupDirect(t, sample.Data(), resolver.CoreRoutes)
	carol := &appsync.Identity{Sub: sample.Carol, Username: "carol"}
	comment := `createComment(input: {postId: "` + sample.HelloPost + `", body: "written?"}) { body }`
	comments := func() (int, any) {
		data, _ := run(t, e, executor.Request{Query: `{ post(id: "` + sample.HelloPost + `") { commentCount comments { items { body } } } }`})
		n, _ := get(data, "post", "commentCount").(float64)
		return int(n), get(data, "post", "comments", "items")
	}
	before, _ := comments()

	data, resp := run(t, e, executor.Request{Identity: carol, Query: `mutation { a: likePost(postId: "01HWNOTAPOST00000000000000") { id } b: ` + comment + ` }`})
	if data != nil || len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "NotFound" || fmt.Sprint(resp.Errors[0].Path) != "[a]" {
		t.Errorf("data %v, errors %+v", data, resp.Errors)
	}
	if n, _ := rec.events(t, "Mutation.createComment"); n != 0 {
		t.Errorf("createComment ran %d times after likePost nulled data", n)
	}
	if n, items := comments(); n != before || strings.Contains(fmt.Sprint(items), "written?") {
		t.Errorf("after the stopped mutation: commentCount %d (was %d), comments %v", n, before, items)
	}

	// unfollow is nullable: its error nulls it alone, and b runs.
	data, resp = run(t, e, executor.Request{Identity: carol, Query: `mutation { a: unfollow(userId: "") { followerId } b: ` + comment + ` }`})
	if data == nil || data["a"] != nil || get(data, "b", "body") != "written?" || len(resp.Errors) != 1 {
		t.Errorf("data %v, errors %+v", data, resp.Errors)
	}
	if n, _ := comments(); n != before+1 {
		t.Errorf("commentCount %d, want %d", n, before+1)
	}
}

func TestChildEventCarriesParentResult(t *testing.T) {
	e, rec := setupDirect(t, sample.Data(), resolver.CoreRoutes)
	_, resp := run(t, e, executor.Request{Query: `{ post(id: "` + sample.HelloPost + `") { title comments(limit: 1) { items { id } } } }`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	_, evs := rec.events(t, "Post.comments")
	if len(evs) != 1 {
		t.Fatalf("%d Post.comments events", len(evs))
	}
	var source map[string]any
	json.Unmarshal(evs[0].Source, &source)
	// The whole object Query.post returned: unselected fields and the prefetch included;
	// the arguments with the defaults the schema gives them, as graphql-java fills them in.
	if source["body"] == nil || source["authorId"] != sample.Alice || source["prefetchedComments"] == nil {
		t.Errorf("source = %s", evs[0].Source)
	}
	if string(evs[0].Arguments) != `{"limit":1,"order":"OLDEST_FIRST"}` || evs[0].Info.ParentTypeName != "Post" || string(evs[0].Stash) != "{}" || string(evs[0].Prev) != "null" {
		t.Errorf("event = %+v", evs[0])
	}
	if resp.Extensions["cost"].(executor.Cost).DynamoDB["Query"] != 1 || resp.Extensions["cost"].(executor.Cost).LambdaInvocations != 2 {
		t.Errorf("cost = %+v", resp.Extensions["cost"])
	}
}

func TestIntrospection(t *testing.T) {
	e, rec := setup(t, store.Dataset{}, resolver.CoreRoutes)
	data, resp := run(t, e, executor.Request{Query: `{
	  __schema { queryType { name } mutationType { name } types { name kind } directives { name } }
	  __type(name: "Post") { name fields { name args { name type { name } } type { kind name ofType { kind name ofType { name } } } } }
	}`})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	if get(data, "__schema", "queryType", "name") != "Query" || get(data, "__type", "name") != "Post" {
		t.Errorf("data = %v", data)
	}
	fields := get(data, "__type", "fields").([]any)
	found := false
	for _, f := range fields {
		if get(f, "name") == "author" {
			found = get(f, "type", "kind") == "NON_NULL" && get(f, "type", "ofType", "name") == "User"
		}
	}
	if !found || len(rec.payloads) != 0 {
		t.Errorf("Post.author type wrong or Lambda invoked: %v", fields)
	}
}

// The query GraphQL clients (GraphiQL, Apollo, graphql-js getIntrospectionQuery) send.
const introspectionQuery = `query IntrospectionQuery {
  __schema {
    queryType { name } mutationType { name } subscriptionType { name }
    types { ...FullType }
    directives { name description locations args { ...InputValue } }
  }
}
fragment FullType on __Type {
  kind name description
  fields(includeDeprecated: true) { name description args { ...InputValue } type { ...TypeRef } isDeprecated deprecationReason }
  inputFields { ...InputValue }
  interfaces { ...TypeRef }
  enumValues(includeDeprecated: true) { name description isDeprecated deprecationReason }
  possibleTypes { ...TypeRef }
}
fragment InputValue on __InputValue { name description type { ...TypeRef } defaultValue }
fragment TypeRef on __Type {
  kind name
  ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name ofType { kind name } } } } } } }
}`

func TestClientIntrospectionQuery(t *testing.T) {
	e, _ := setup(t, store.Dataset{}, resolver.CoreRoutes)
	data, resp := run(t, e, executor.Request{Query: introspectionQuery, OperationName: "IntrospectionQuery"})
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors)
	}
	types := get(data, "__schema", "types").([]any)
	byName := map[string]any{}
	for _, ty := range types {
		byName[get(ty, "name").(string)] = ty
	}
	for _, name := range []string{"Query", "Mutation", "Subscription", "User", "CreateUserInput", "AWSDateTime", "__Type", "String"} {
		if byName[name] == nil {
			t.Errorf("type %s missing from introspection", name)
		}
	}
	if in := get(byName["CreateUserInput"], "inputFields"); len(in.([]any)) != 4 {
		t.Errorf("CreateUserInput inputFields = %v", in)
	}
	if get(data, "__schema", "subscriptionType", "name") != "Subscription" {
		t.Errorf("subscriptionType = %v", get(data, "__schema", "subscriptionType"))
	}
}

// A request the executor cannot pick an operation of says why in words,
// and a handle the API refuses says the rule, in a query as in createUser.
func TestMessagesSayWhatIsWrong(t *testing.T) {
	e, _ := setup(t, sample.Data(), resolver.CoreRoutes)
	for _, c := range []struct {
		req  executor.Request
		want string
	}{
		{executor.Request{}, `the request has no query: send {"query": "{ ... }"}`},
		{executor.Request{Query: "  \n"}, `the request has no query: send {"query": "{ ... }"}`},
		{executor.Request{Query: "query A { me { id } } query B { me { id } }"}, "the document has 2 operations: name the one to run in operationName"},
		{executor.Request{Query: "query A { me { id } }", OperationName: "C"}, `the document has no operation named "C"`},
		{executor.Request{Query: `{ user(handle: "No!") { id } }`}, "invalid handle: " + store.HandleRule},
		{executor.Request{Query: `mutation { createUser(input: {handle: "x", name: "X", email: "x@example.com"}) { id } }`, Identity: signedIn("u_new")}, "invalid handle: " + store.HandleRule},
	} {
		_, resp := run(t, e, c.req)
		if len(resp.Errors) != 1 || resp.Errors[0].Message != c.want {
			t.Errorf("%q: %+v, want the message %q", c.req.Query, resp.Errors, c.want)
		}
	}
}
