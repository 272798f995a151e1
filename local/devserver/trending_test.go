package devserver_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// Trending through make dev: what several users like and comment shows in
// trending(window: HOUR) in score order with exact counts, within the
// shortened window; an unlike lowers a score; a deleted post leaves; a
// draft takes no like; the API key reads it; a read is at most 2 round trips.
func TestTrendingThroughMakeDev(t *testing.T) {
	t.Parallel() // most of it is waiting out make dev's kept rankings (trending.KeepFor)
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("trending-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data(),
		TrendingWindow: 300 * time.Millisecond, WritesPerMinute: -1})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	must := func(who, query string) map[string]any {
		t.Helper()
		r := post(t, url, devserver.Token(who), query)
		if len(r.Errors) > 0 {
			t.Fatalf("%s: %s: %v", who, query, r.Errors)
		}
		return r.Data
	}
	newPost := func(who, title, status string) string {
		d := must(who, fmt.Sprintf(`mutation { createPost(input: {title: %q, body: "b", status: %s}) { id } }`, title, status))
		return d["createPost"].(map[string]any)["id"].(string)
	}
	first, second, draft := newPost("alice", "first", "PUBLISHED"), newPost("bob", "second", "PUBLISHED"), newPost("carol", "draft", "DRAFT")
	for _, who := range []string{"bob", "carol"} {
		must(who, fmt.Sprintf(`mutation { likePost(postId: %q) { id } }`, first))
		must(who, fmt.Sprintf(`mutation { createComment(input: {postId: %q, body: "nice 👍"}) { id } }`, first))
	}
	must("alice", fmt.Sprintf(`mutation { likePost(postId: %q) { id } }`, second))
	// A draft takes no like, not even its author's: it cannot be listed.
	if r := post(t, url, devserver.Token("carol"), fmt.Sprintf(`mutation { likePost(postId: %q) { id } }`, draft)); len(r.Errors) == 0 {
		t.Errorf("a like of a draft was taken")
	}

	wait := func(want ...string) {
		t.Helper()
		start := time.Now()
		for {
			r := post(t, url, "", `{ trending(window: HOUR) { items { score likeCount commentCount post { title } } } }`)
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			var got []string
			for _, it := range r.Data["trending"].(map[string]any)["items"].([]any) {
				m := it.(map[string]any)
				got = append(got, fmt.Sprintf("%s %v=%v+%v", m["post"].(map[string]any)["title"], m["score"], m["likeCount"], m["commentCount"]))
			}
			if c := r.Extensions.Cost; c.DynamoDBRoundTrips > 2 {
				t.Errorf("a trending page cost %d round trips (%v), want at most 2", c.DynamoDBRoundTrips, c.DynamoDB)
			}
			if slices.Equal(got, want) {
				t.Logf("%s after %v", strings.Join(want, ", "), time.Since(start).Round(time.Millisecond))
				return
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("trending(HOUR) = %v, want %v", got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	wait("first 4=2+2", "second 1=1+0")
	// A listed post resolves as any Post, its children answered in the
	// root's invocation and early-returned.
	r := post(t, url, devserver.Token("bob"), `{ trending(window: DAY, limit: 1) { items { post { title likedByMe author { handle } comments(limit: 1) { items { body author { handle } } } } } } }`)
	got, _ := json.Marshal(r.Data)
	if want := `{"trending":{"items":[{"post":{"author":{"handle":"alice"},"comments":{"items":[{"author":{"handle":"bob"},"body":"nice 👍"}]},"likedByMe":true,"title":"first"}}]}}`; len(r.Errors) > 0 || string(got) != want || r.Extensions.Cost.LambdaInvocations != 1 {
		t.Errorf("a listed post with its children: %s %v in %d invocations; want %s in 1", got, r.Errors, r.Extensions.Cost.LambdaInvocations, want)
	}
	must("bob", fmt.Sprintf(`mutation { unlikePost(postId: %q) { id } }`, first))
	must("carol", fmt.Sprintf(`mutation { likePost(postId: %q) { id } }`, second))
	must("bob", fmt.Sprintf(`mutation { likePost(postId: %q) { id } }`, second))
	wait("second 3=3+0", "first 3=1+2") // a tie: the newer post first
	must("alice", fmt.Sprintf(`mutation { deletePost(id: %q) { id } }`, first))
	wait("second 3=3+0")
}
