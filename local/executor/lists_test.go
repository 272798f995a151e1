package executor_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
)

// A post with its newest comments first: the post and its comments read at
// once (one round trip), the page returned early to Post.comments; the same
// answer as the direct layout's.
func TestNewestCommentsFirstInOneRoundTrip(t *testing.T) {
	d := sample.Blog(2, 30, 4)
	js, _ := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	post := d.Posts[len(d.Posts)-1].ID
	data, cost, _ := sameAnswer(t, js, direct, executor.Request{Query: `{ post(id: "` + post + `") { title comments(order: NEWEST_FIRST, limit: 5) { items { id } } } }`})
	items := get(data, "post", "comments", "items").([]any)
	if len(items) != 5 || get(items[0], "id") != d.Comments[len(d.Comments)-1].ID {
		t.Errorf("newest comments = %v", items)
	}
	if cost.LambdaInvocations != 1 || cost.DynamoDBRoundTrips != 1 || cost.EarlyReturns != 1 {
		t.Errorf("cost = %+v; want 1 invocation, 1 round trip, Post.comments returned early", cost)
	}
	// Oldest first is one Query, as before; both orders in one query.
	_, cost, _ = sameAnswer(t, js, direct, executor.Request{Query: `{ post(id: "` + post + `") { old: comments(limit: 3) { items { id } } new: comments(order: NEWEST_FIRST, limit: 3) { items { id } } } }`})
	if cost.LambdaInvocations != 1 || cost.DynamoDBRoundTrips > 2 {
		t.Errorf("both orders: %+v", cost)
	}
}

// Pages in both directions through GraphQL: every comment once, in order;
// a token with other arguments is refused; a bad range is a ValidationError.
func TestPagingBothWaysThroughGraphQL(t *testing.T) {
	d := sample.Blog(1, 23, 3)
	js, _ := setup(t, d, resolver.CoreRoutes)
	post := d.Posts[len(d.Posts)-1].ID
	page := func(order, token string) (ids []string, next any, errType string) {
		q := `query Q($t: String) { post(id: "` + post + `") { comments(limit: 4, order: ` + order + `, nextToken: $t) { items { id } nextToken } } }`
		vars := map[string]any{}
		if token != "" {
			vars["t"] = token
		}
		data, resp := run(t, js, executor.Request{Query: q, Variables: vars})
		if len(resp.Errors) > 0 {
			return nil, nil, resp.Errors[0].ErrorType
		}
		for _, it := range get(data, "post", "comments", "items").([]any) {
			ids = append(ids, get(it, "id").(string))
		}
		return ids, get(data, "post", "comments", "nextToken"), ""
	}
	for _, order := range []string{"OLDEST_FIRST", "NEWEST_FIRST"} {
		var all []string
		token := ""
		for range 20 {
			ids, next, errType := page(order, token)
			if errType != "" {
				t.Fatalf("%s: %s", order, errType)
			}
			all = append(all, ids...)
			if next == nil {
				break
			}
			token = next.(string)
		}
		want := slices.Sorted(slices.Values(all))
		if order == "NEWEST_FIRST" {
			slices.Reverse(want)
		}
		if len(all) != 23 || !slices.Equal(all, want) || len(slices.Compact(slices.Clone(want))) != 23 {
			t.Errorf("%s: %d comments, in order: %v", order, len(all), slices.Equal(all, want))
		}
	}
	_, next, _ := page("OLDEST_FIRST", "")
	if _, _, errType := page("NEWEST_FIRST", next.(string)); errType != "InvalidNextToken" {
		t.Errorf("an OLDEST_FIRST token used NEWEST_FIRST: %q, want InvalidNextToken", errType)
	}
	_, resp := run(t, js, executor.Request{Query: `{ post(id: "` + post + `") { comments(after: "2024-05-02T00:00:00Z", before: "2024-05-01T00:00:00Z") { items { id } } } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "ValidationError" {
		t.Errorf("after > before: %+v", resp.Errors)
	}
	data, resp := run(t, js, executor.Request{Query: `{ post(id: "` + post + `") { comments(after: "2024-05-01T08:05:00Z", before: "2024-05-01T08:09:00.000Z") { items { createdAt } } } }`})
	var times []any
	for _, it := range get(data, "post", "comments", "items").([]any) {
		times = append(times, get(it, "createdAt"))
	}
	if len(resp.Errors) > 0 || fmt.Sprint(times) != "[2024-05-01T08:06:00.000Z 2024-05-01T08:07:00.000Z 2024-05-01T08:08:00.000Z]" {
		t.Errorf("a range: %v, %+v", times, resp.Errors)
	}
}

// Drafts: another user's draft is null, another user's drafts an empty
// connection; the author sees and publishes them.
func TestDraftsThroughGraphQL(t *testing.T) {
	js, _ := setup(t, sample.Data(), resolver.CoreRoutes)
	alice, bob := signedIn(sample.Alice), signedIn(sample.Bob)
	data, resp := run(t, js, executor.Request{Identity: alice, Query: `mutation { createPost(input: {title: "Soon", body: "b", status: DRAFT}) { id status author { postCount } } }`})
	if len(resp.Errors) > 0 || get(data, "createPost", "status") != "DRAFT" || get(data, "createPost", "author", "postCount") != float64(1) {
		t.Fatalf("create a draft: %v %+v", data, resp.Errors)
	}
	id := get(data, "createPost", "id").(string)
	lookup := `{ post(id: "` + id + `") { title } posts(ids: ["` + id + `"]) { title } user(id: "u_alice") { drafts: posts(status: DRAFT) { items { id } } posts { items { id } } } }`
	for name, who := range map[string]*executor.Request{"bob": {Identity: bob}, "API key": {}} {
		who.Query = lookup
		data, resp := run(t, js, *who)
		if len(resp.Errors) > 0 || get(data, "post") != nil || get(data, "posts", 0) != nil ||
			len(get(data, "user", "drafts", "items").([]any)) != 0 || len(get(data, "user", "posts", "items").([]any)) != 1 {
			t.Errorf("%s sees alice's draft: %v %+v", name, data, resp.Errors)
		}
	}
	data, resp = run(t, js, executor.Request{Identity: alice, Query: lookup})
	if len(resp.Errors) > 0 || get(data, "post", "title") != "Soon" || get(data, "user", "drafts", "items", 0, "id") != id {
		t.Errorf("alice's own draft: %v %+v", data, resp.Errors)
	}
	_, resp = run(t, js, executor.Request{Identity: bob, Query: `mutation { publishPost(id: "` + id + `") { id } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "NotFound" { // absent to him, as an unknown ID
		t.Errorf("bob publishes: %+v", resp.Errors)
	}
	data, resp = run(t, js, executor.Request{Identity: alice, Query: `mutation { publishPost(id: "` + id + `") { status author { postCount posts(limit: 1) { items { id } } } } }`})
	if len(resp.Errors) > 0 || get(data, "publishPost", "status") != "PUBLISHED" || get(data, "publishPost", "author", "postCount") != float64(2) ||
		get(data, "publishPost", "author", "posts", "items", 0, "id") != id {
		t.Errorf("alice publishes: %v %+v", data, resp.Errors)
	}
	data, _ = run(t, js, executor.Request{Identity: bob, Query: lookup})
	if get(data, "post", "title") != "Soon" {
		t.Errorf("bob after publication: %v", data)
	}
}
