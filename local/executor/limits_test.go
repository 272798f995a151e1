package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/schema"
)

// Tests at the limits of what the API accepts: 20,000-character bodies of
// 4-byte characters, 100-comment pages of 2,000-character comments that
// encoding/json would have escaped to six bytes each, 32 and 100 posts at
// once. The executor refuses, as Lambda does, any request or reply over
// payload.MaxBytes, so a budget that does not hold fails these tests.

// mustRun runs req and fails the test on any GraphQL error.
func mustRun(t *testing.T, e *executor.Executor, req executor.Request) (map[string]any, executor.Cost) {
	t.Helper()
	data, resp := run(t, e, req)
	if len(resp.Errors) > 0 {
		t.Fatalf("errors: %+v", resp.Errors[:min(3, len(resp.Errors))])
	}
	return data, resp.Extensions["cost"].(executor.Cost)
}

func signedIn(id string) *appsync.Identity { return &appsync.Identity{Sub: id, Username: id} }

func createUser(t *testing.T, e *executor.Executor, id string) {
	t.Helper()
	mustRun(t, e, executor.Request{Identity: signedIn(id), Query: `mutation($h: String!) {
	  createUser(input: {handle: $h, name: "N", email: "n@example.com"}) { id } }`,
		Variables: map[string]any{"h": strings.ToLower(strings.ReplaceAll(id, "-", "_"))}})
}

// commentsOf follows the nextToken of each post's comments until the end,
// starting from the pages of the first query, and returns every comment body
// and the largest payload seen.
func commentsOf(t *testing.T, e *executor.Executor, posts []any) (bodies map[string][]string, largest int) {
	t.Helper()
	bodies = map[string][]string{}
	for _, p := range posts {
		id := get(p, "id").(string)
		conn := get(p, "comments")
		for {
			for _, c := range get(conn, "items").([]any) {
				if get(c, "author", "name") == nil {
					t.Fatalf("post %s: a comment without its author: %v", id, c)
				}
				bodies[id] = append(bodies[id], get(c, "body").(string))
			}
			token := get(conn, "nextToken")
			if token == nil {
				break
			}
			data, cost := mustRun(t, e, executor.Request{
				Query: `query($id: ID!, $t: String) { post(id: $id) {
				  comments(limit: 100, nextToken: $t) { items { body author { name } } nextToken } } }`,
				Variables: map[string]any{"id": id, "t": token}})
			largest = max(largest, cost.LargestPayloadBytes)
			conn = get(data, "post", "comments")
		}
	}
	return bodies, largest
}

const postsWithComments = `query($ids: [ID!]!) { posts(ids: $ids) {
  id author { name } comments(limit: 100) { items { body author { name } } nextToken } } }`

// largeBlog is n posts by alice with per comments each of 2,000 '<' by bob and
// carol, and bodies of 20,000 4-byte characters.
func largeBlog(n, per int) (store.Dataset, []any) {
	d := sample.Data()
	ids := make([]any, n)
	for i := range n {
		id := fmt.Sprintf("01HX%022d", i)
		ids[i] = id
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: sample.Alice, Title: strings.Repeat("T", 200),
			Body: strings.Repeat("😀", 20000), CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z", CommentCount: per})
		for j := range per {
			d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HY%018d%04d", i, j), PostID: id,
				AuthorID: []string{sample.Bob, sample.Carol}[j%2], Body: strings.Repeat("<", 2000), CreatedAt: "2024-05-01T00:00:00.000Z"})
		}
	}
	d.Users[0].PostCount += n
	return d, ids
}

// stubLambda answers every invocation with reply.
type stubLambda struct{ reply []byte }

func (s stubLambda) Invoke(context.Context, []byte) ([]byte, error) { return s.reply, nil }

func TestPayloadsOverTheLimitFailTheFieldAsInAppSync(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	big := []byte(`{"id":"p","title":"` + strings.Repeat("x", payload.MaxBytes) + `"}`)
	e := executor.New(sch, stubLambda{reply: big}, resolver.CoreRoutes)
	resp := e.Execute(context.Background(), executor.Request{Query: `{ post(id: "p") { title } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Lambda:Unhandled" || !strings.Contains(resp.Errors[0].Message, "payload size exceeded") {
		t.Errorf("reply over the limit: errors %+v", resp.Errors)
	}
	if c := resp.Extensions["cost"].(executor.Cost); c.LargestPayloadBytes != len(big) {
		t.Errorf("largestPayloadBytes = %d, want %d", c.LargestPayloadBytes, len(big))
	}
	e = executor.New(sch, stubLambda{reply: []byte(`{"id":"p"}`)}, resolver.CoreRoutes)
	resp = e.Execute(context.Background(), executor.Request{Identity: signedIn("u_x"),
		Query:     `mutation($b: String!) { createPost(input: {title: "t", body: $b}) { id } }`,
		Variables: map[string]any{"b": strings.Repeat("y", payload.MaxBytes)}})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Lambda:RequestTooLargeException" {
		t.Errorf("request over the limit: errors %+v", resp.Errors)
	}
}

func TestAliasesNeverChangeWhatIsRead(t *testing.T) {
	e, _ := setup(t, sample.Data(), resolver.CoreRoutes)
	data, _ := mustRun(t, e, executor.Request{Query: `{ user(id: "u_alice") { following { items { id: handle } } } }`})
	if got := get(data, "user", "following", "items", 0, "id"); got != "bob" {
		t.Errorf("following { items { id: handle } }: %v, want bob's handle", data)
	}
	data, _ = mustRun(t, e, executor.Request{Query: `{ user(id: "u_bob") { followers(limit: 2) { it: items { handle } } } }`})
	if got := get(data, "user", "followers", "it", 0, "handle"); got != "alice" {
		t.Errorf("followers { it: items { handle } }: %v, want alice", data)
	}
}

func TestACommentNeedsItsAuthorsProfile(t *testing.T) {
	e, _ := setup(t, sample.Data(), resolver.CoreRoutes)
	_, resp := run(t, e, executor.Request{Identity: signedIn("u_ghost"),
		Query: `mutation { createComment(input: {postId: "` + sample.HelloPost + `", body: "boo"}) { id } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "NotFound" {
		t.Fatalf("createComment without a profile: %+v, want NotFound", resp.Errors)
	}
	data, _ := mustRun(t, e, executor.Request{Query: `{ post(id: "` + sample.HelloPost + `") { commentCount comments { items { author { name } } } } }`})
	if n := len(get(data, "post", "comments", "items").([]any)); n != 2 || get(data, "post", "commentCount") != 2.0 {
		t.Errorf("post after a refused comment: %v", data)
	}
}

func TestQueriesDeeperThanTheLimitAreRefusedBeforeAnyResolver(t *testing.T) {
	e, rec := setup(t, sample.Blog(2, 2, 2), resolver.CoreRoutes)
	// 16 levels: post { comments { items { post { comments { items { ... } } } } } }
	deep := `{ post(id: "` + sample.HelloPost + `") { ` + strings.Repeat(`comments { items { post { `, 5) + `title` + strings.Repeat(` } } }`, 5) + ` } }`
	_, resp := run(t, e, executor.Request{Query: deep})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "QueryDepthLimitExceeded" || len(rec.payloads) != 0 {
		t.Errorf("a %d-deep query: errors %+v after %d invocations; want one QueryDepthLimitExceeded and none",
			resolver.QueryDepthLimit+1, resp.Errors, len(rec.payloads))
	}
	// At the limit it runs: the same nesting one level shallower.
	atLimit := `{ post(id: "` + sample.HelloPost + `") { ` + strings.Repeat(`comments { items { post { `, 4) + `comments { nextToken }` + strings.Repeat(` } } }`, 4) + ` } }`
	if _, resp := run(t, e, executor.Request{Query: atLimit}); len(resp.Errors) != 0 {
		t.Errorf("a %d-deep query: %+v", resolver.QueryDepthLimit, resp.Errors)
	}
}

func TestResolversPastTheCountLimitFailWithoutAnInvocation(t *testing.T) {
	s := sample.Data()
	seed := `{ user(id: "u_alice") { posts { items { comments { items { author { name } } } } } } }`
	for _, c := range []struct {
		limit, failed int
		direct        bool
	}{{5, 0, true}, {4, 1, true}, {2, 1, true}, {5, 0, false}, {4, 1, false}, {2, 1, false}} {
		layout := setup
		if c.direct {
			layout = setupDirect
		}
		e, rec := layout(t, s, resolver.CoreRoutes, executor.WithQueryLimits(resolver.QueryDepthLimit, c.limit))
		_, resp := run(t, e, executor.Request{Query: seed})
		limited := 0
		for _, err := range resp.Errors {
			if err.ErrorType == "ResolverExecutionLimitReached" {
				limited++
			}
		}
		// user, posts, Post.comments (1 post), Comment.author (2 comments): 5
		// resolvers. Past the limit a field fails, and what is below it never runs.
		if limited != c.failed {
			t.Errorf("limit %d: %d fields failed with ResolverExecutionLimitReached, want %d (%+v)", c.limit, limited, c.failed, resp.Errors)
		}
		if !c.direct {
			// The JavaScript resolvers return the Query.user's answers:
			// the limited fields fail all the same.
			if n := len(rec.payloads); n != 1 {
				t.Errorf("limit %d: %d invocations, want 1", c.limit, n)
			}
			continue
		}
		if _, evs := rec.events(t, "Comment.author"); len(evs) != max(0, min(2, c.limit-3)) {
			t.Errorf("limit %d: %d Comment.author events sent to the Lambda", c.limit, len(evs))
		}
	}
}

func mustSchema(t *testing.T) *ast.Schema {
	t.Helper()
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	return sch
}

func TestAuthorizationDirectivesAreEnforcedBeforeTheLambda(t *testing.T) {
	e, rec := setup(t, sample.Data(), resolver.CoreRoutes)
	// Mutation has no directive: the default mode (user pools) alone.
	_, resp := run(t, e, executor.Request{Query: `mutation { createPost(input: {title: "t", body: "b"}) { id } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Unauthorized" ||
		resp.Errors[0].Message != "Not Authorized to access createPost on type Mutation" || len(rec.payloads) != 0 {
		t.Errorf("API key createPost: %+v after %d invocations", resp.Errors, len(rec.payloads))
	}
	// me is @aws_cognito_user_pools only, beside API-key fields.
	data, resp := run(t, e, executor.Request{Query: `{ me { id } post(id: "` + sample.HelloPost + `") { title } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].Message != "Not Authorized to access me on type Query" || get(data, "post", "title") != "Hello" {
		t.Errorf("API key me: data %v, errors %+v", data, resp.Errors)
	}
	if n, _ := rec.events(t, "Query.me"); n != 0 {
		t.Errorf("Query.me invoked %d times for an API-key caller", n)
	}
	// A signed-in caller passes both.
	data, resp = run(t, e, executor.Request{Identity: signedIn(sample.Bob), Query: `{ me { handle } post(id: "` + sample.HelloPost + `") { title } }`})
	if len(resp.Errors) != 0 || get(data, "me", "handle") != "bob" {
		t.Errorf("signed in: data %v, errors %+v", data, resp.Errors)
	}
	// An IAM caller (the deployment's selection probe) reads what @aws_iam
	// allows: a post, its title and its comments, and nothing else.
	iam := &appsync.Identity{AccountID: "000000000000", UserArn: "arn:aws:iam::000000000000:role/probe"}
	data, resp = run(t, e, executor.Request{Identity: iam, Query: `{ post(id: "` + sample.HelloPost + `") { title comments { items { body } } } user(handle: "bob") { name } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].Message != "Not Authorized to access user on type Query" || get(data, "post", "title") != "Hello" ||
		get(data, "post", "comments", "items", 0, "body") == nil {
		t.Errorf("IAM: data %v, errors %+v", data, resp.Errors)
	}
}

// Fragments that each spread the next one twice, 22 levels of them: 2^22
// expansions when a fragment is expanded every time it is spread, one each
// when it is expanded once per selection set, as GraphQL's field collection
// does. Nested under fields, the same chain is refused by the depth limit
// before any resolver runs.
func TestFragmentsSpreadTwiceAtEveryLevelCostTheirLength(t *testing.T) {
	e, rec := setup(t, sample.Data(), resolver.CoreRoutes)
	chain := func(body func(next string) string) string {
		var b strings.Builder
		for i := 1; i < 22; i++ {
			fmt.Fprintf(&b, "fragment F%d on User { %s }\n", i, body(fmt.Sprintf("F%d", i+1)))
		}
		return b.String() + "fragment F22 on User { id handle }"
	}
	flat := `{ user(handle: "alice") { ...F1 } }` + "\n" + chain(func(next string) string { return "..." + next + " ..." + next })
	data, _ := mustRun(t, e, executor.Request{Query: flat})
	if got := fmt.Sprint(data["user"]); got != "map[handle:alice id:u_alice]" {
		t.Errorf("user = %s", got)
	}
	_, events := rec.events(t, "Query.user")
	if len(events) != 1 || string(events[0].Info.SelectionSetList) != `["id","handle"]` {
		t.Errorf("Query.user's events: %+v", events)
	}

	nested := `{ user(handle: "alice") { ...F1 } }` + "\n" + chain(func(next string) string {
		return "following { items { ..." + next + " } } followers { items { ..." + next + " } }"
	})
	resp := e.Execute(t.Context(), executor.Request{Query: nested})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "QueryDepthLimitExceeded" {
		t.Errorf("nested: errors %+v", resp.Errors)
	}
}
