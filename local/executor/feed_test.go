package executor_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/payload"
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

// A feed of the largest posts the API accepts (a 200-character title and a
// 20,000-character body of four-byte characters), asked 100 at a time
// through a named fragment and variables, with counts, likedByMe and
// authors: every page fits Lambda's payload, and paging to the end gives
// every post once, whole. With DynamoDB throttling the page's BatchGetItem,
// the feed is a Throttled error, not a partial page.
func TestAFeedOfTheLargestPostsPagesWithinThePayload(t *testing.T) {
	d := store.Dataset{Users: []store.User{
		{ID: "u_writer", Handle: "writer", Name: "W", CreatedAt: "2026-01-01T00:00:00.000Z", PostCount: 100},
		{ID: sample.Carol, Handle: "carol", Name: "Carol", CreatedAt: "2026-01-01T00:00:00.000Z"},
	}}
	title, body := strings.Repeat("😀", 200), strings.Repeat("😀", 20000)
	start := time.Now().Add(-time.Hour)
	for i := range 100 {
		at := start.Add(time.Duration(i) * time.Second)
		d.Posts = append(d.Posts, store.Post{ID: store.NewULID(at), AuthorID: "u_writer", Title: title, Body: body,
			CreatedAt: at.Format(time.RFC3339), UpdatedAt: at.Format(time.RFC3339), Status: store.StatusPublished})
	}
	feedtest.FollowWithFeed(&d, sample.Carol, "u_writer", time.Now().Add(feed.TTL).Unix())
	e, _ := setup(t, d, resolver.CoreRoutes, bytesNotTime)
	q := `query F($n: Int, $t: String) { feed(limit: $n, nextToken: $t) { items { ...P } nextToken } }
	fragment P on Post { id title body commentCount likeCount likedByMe author { name } }`
	seen := map[string]bool{}
	largest, pages := 0, 0
	var token any
	for {
		data, cost := mustRun(t, e, executor.Request{Query: q, Variables: map[string]any{"n": 100, "t": token}, Identity: signedIn(sample.Carol)})
		pages++
		largest = max(largest, cost.LargestPayloadBytes)
		for _, it := range get(data, "feed", "items").([]any) {
			id := get(it, "id").(string)
			if seen[id] || get(it, "body") != body || get(it, "title") != title || get(it, "author", "name") != "W" || get(it, "likedByMe") != false {
				t.Fatalf("page %d: post %s repeated or changed", pages, id)
			}
			seen[id] = true
		}
		if token = get(data, "feed", "nextToken"); token == nil || pages > 120 {
			break
		}
	}
	if len(seen) != 100 || largest > payload.MaxBytes {
		t.Errorf("%d posts in %d pages, largest payload %d bytes (limit %d)", len(seen), pages, largest, payload.MaxBytes)
	}
	t.Logf("100 posts of 80 kB: %d pages, largest Lambda payload %d bytes", pages, largest)

	faulty := setupFaulty(t, d, onBatchGet(func(context.Context) error {
		return &types.ProvisionedThroughputExceededException{Message: aws.String("throttled (injected)")}
	}))
	data, resp := run(t, faulty, executor.Request{Query: q, Variables: map[string]any{"n": 20}, Identity: signedIn(sample.Carol)})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "Throttled" || data != nil && data["feed"] != nil {
		t.Errorf("a throttled feed: %v %+v", data, resp.Errors)
	}
}
