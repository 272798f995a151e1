package executor_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/feedtest"
	"github.com/example/appsync-dynamo/local/sample"
)

// feedData is make dev's blog with carol's feed as the projector writes it
// (alice's posts, carol following alice), its entries expiring a window
// from now (the blog's posts are older than the feed's window).
func feedData() store.Dataset {
	d := sample.Blog(12, 2, 3)
	feedtest.FollowWithFeed(&d, sample.Carol, sample.Alice, time.Now().Add(feed.TTL).Unix())
	return d
}

// Query.feed: the caller's feed, newest first, pages to the end, each page
// in one invocation and two round trips with its children answered; an API
// key is refused.
func TestFeedPagesInTwoRoundTrips(t *testing.T) {
	d := feedData()
	js, _ := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	var seen []string
	token := ""
	for page := 0; ; page++ {
		q := executor.Request{Query: `query F($t: String) { feed(limit: 5, nextToken: $t) { items { id title commentCount author { name } } nextToken } }`,
			Variables: map[string]any{"t": token}, Identity: signedIn(sample.Carol)}
		if token == "" {
			q.Variables = nil
		}
		data, cost, _ := sameAnswer(t, js, direct, q)
		if cost.LambdaInvocations != 1 || cost.DynamoDBRoundTrips > 3 {
			t.Errorf("page %d: %+v; want 1 invocation, the feed's 2 round trips and the authors'", page, cost)
		}
		for _, it := range get(data, "feed", "items").([]any) {
			seen = append(seen, it.(map[string]any)["id"].(string))
		}
		next, _ := get(data, "feed", "nextToken").(string)
		if next == "" {
			break
		}
		token = next
	}
	if len(seen) != len(d.Items) {
		t.Errorf("%d posts in the feed, want %d", len(seen), len(d.Items))
	}
	for i := 1; i < len(seen); i++ {
		if seen[i] >= seen[i-1] {
			t.Errorf("not newest first: %v", seen)
			break
		}
	}
	_, resp := run(t, js, executor.Request{Query: `{ feed { items { id } } }`})
	if len(resp.Errors) != 1 {
		t.Errorf("an API key's feed: %+v, want refused", resp.Errors)
	}
	t.Log(fmt.Sprint(len(seen), " posts"))
}
