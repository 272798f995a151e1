//go:build !race && !nobulk

// The tests of this file run the package's code at volume (thousands of
// generated queries, the largest payloads, every cut point of a redo, the
// capacity workloads). The race detector would cost them 4 to 10 times
// their time for code the package's other tests run under it, concurrently:
// make test runs them in a pass of their own, without it; the copies of the
// tree that local/removal and local/extending test, whose changes are to
// wiring and not to volume, leave them out (nobulk) (docs/local.md).

package executor_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/feedtest"
	"github.com/example/appsync-dynamo/local/sample"
)

func TestThirtyTwoPostsWithFullCommentPagesFit(t *testing.T) {
	d, ids := largeBlog(32, 100)
	e, _ := setup(t, d, resolver.CoreRoutes, bytesNotTime)
	data, cost := mustRun(t, e, executor.Request{Query: postsWithComments, Variables: map[string]any{"ids": ids}})
	bodies, largest := commentsOf(t, e, get(data, "posts").([]any))
	largest = max(largest, cost.LargestPayloadBytes)
	total := 0
	for _, bs := range bodies {
		total += len(bs)
	}
	if total != 3200 || largest > payload.MaxBytes {
		t.Errorf("got %d comments (want 3200), largest payload %d bytes (limit %d)", total, largest, payload.MaxBytes)
	}
	t.Logf("32 posts of 80 kB with 100 comments each: first query %+v", cost)
}

func TestThirtyTwoPostsThroughANamedFragmentAndVariablesFit(t *testing.T) {
	d, ids := largeBlog(32, 100)
	e, _ := setup(t, d, resolver.CoreRoutes, bytesNotTime)
	// A named fragment hides the comments' arguments from the post's resolver
	// (AppSync leaves it unexpanded): no prefetch, each post's comments are
	// queried, and pages are cut by bytes.
	data, cost := mustRun(t, e, executor.Request{Query: `query($ids: [ID!]!, $n: Int) { posts(ids: $ids) { ...P } }
	  fragment P on Post { id author { name } comments(limit: $n) { items { body author { name } } nextToken } }`,
		Variables: map[string]any{"ids": ids, "n": 100}})
	bodies, largest := commentsOf(t, e, get(data, "posts").([]any))
	total := 0
	for _, bs := range bodies {
		total += len(bs)
	}
	if largest = max(largest, cost.LargestPayloadBytes); total != 3200 || largest > payload.MaxBytes {
		t.Errorf("got %d comments (want 3200), largest payload %d bytes (limit %d)", total, largest, payload.MaxBytes)
	}
}

func TestAHundredLargePostsAreAClearErrorNotAFailedInvocation(t *testing.T) {
	d, ids := largeBlog(100, 0)
	// Reading 8 MB from DynamoDB Local under the race detector took over
	// Lambda's 10 s in one CI run of four, where DynamoDB serves it in well
	// under one; what this test checks is the payload's limit.
	e, _ := setup(t, d, resolver.CoreRoutes, bytesNotTime)
	// 100 posts of 80 kB cannot be one Lambda reply: a clear error, not a
	// Lambda failure.
	_, resp := run(t, e, executor.Request{Query: `query($ids: [ID!]!) { posts(ids: $ids) { id body } }`, Variables: map[string]any{"ids": ids}})
	cost := resp.Extensions["cost"].(executor.Cost)
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "ValidationError" || cost.LargestPayloadBytes > payload.MaxBytes {
		t.Errorf("errors %+v, cost %+v; want one ValidationError and no payload over the limit", resp.Errors, cost)
	}
	// Without the bodies they fit, with their authors.
	data, _ := mustRun(t, e, executor.Request{Query: `query($ids: [ID!]!) { posts(ids: $ids) { id title author { name } } }`, Variables: map[string]any{"ids": ids}})
	if n := len(get(data, "posts").([]any)); n != 100 || get(data, "posts", 99, "author", "name") != "Alice" {
		t.Errorf("got %d posts: %.200v", n, data)
	}
}

// TestALargeChildSelectionOnAFullBatchOfTheLargestComments is the worst
// Comment.author batch: 250 events whose sources are the largest comments
// (2,000 U+2028, six bytes each in JSON) and whose selection is 1,200
// aliases of the author's name, in a named fragment so that no parent
// answers it (20 posts' pages of 15 comments, one level of one query). The
// selection text alone (13 kB) would take a batch of such events past
// Lambda's 6 MB; the child resolver leaves a selection that long out (the
// Lambda then reads every attribute and answers no child), so that each
// event stays within payload.EventReserve besides its source.
func TestALargeChildSelectionOnAFullBatchOfTheLargestComments(t *testing.T) {
	d := sample.Data()
	var ids []any
	for i := range 20 {
		id := fmt.Sprintf("01HZ%022d", i)
		ids = append(ids, id)
		d.Posts = append(d.Posts, store.Post{ID: id, AuthorID: sample.Alice, Title: "T", Body: "B",
			CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z", CommentCount: 15})
		for j := range 15 {
			d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HZ%018d%04d", i, j), PostID: id,
				AuthorID: []string{sample.Bob, sample.Carol}[j%2], Body: strings.Repeat("\u2028", 2000), CreatedAt: "2024-05-01T00:00:00.000Z"})
		}
	}
	d.Users[0].PostCount += len(ids)
	e, _ := setup(t, d, resolver.CoreRoutes, bytesNotTime)
	var aliases strings.Builder
	for k := range 1200 {
		fmt.Fprintf(&aliases, "a%d: name\n", k)
	}
	data, cost := mustRun(t, e, executor.Request{Variables: map[string]any{"ids": ids},
		Query: `query($ids: [ID!]!) { posts(ids: $ids) { comments(limit: 15) { items { authorId ...Author } } } }
		fragment Author on Comment { author { id ` + aliases.String() + ` } }`})
	seen := 0
	for _, p := range get(data, "posts").([]any) {
		for _, c := range get(p, "comments", "items").([]any) {
			if want := map[any]string{sample.Bob: "Bob", sample.Carol: "Carol"}[get(c, "authorId")]; get(c, "author", "a1199") == want {
				seen++
			}
		}
	}
	if seen != 300 {
		t.Errorf("%d comments with their author's name under every alias, want 300", seen)
	}
	if cost.LargestPayloadBytes > payload.MaxBytes {
		t.Errorf("largest Lambda payload %d bytes, over %d", cost.LargestPayloadBytes, payload.MaxBytes)
	}
	t.Logf("cost %+v", cost)
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

// Every generated query answers through the layout as deployed exactly as
// through the plainest one: the same data (a null, a missing attribute or a
// shorter page is a difference) and the same errors. DIFFERENTIAL_QUERIES
// sets the count (2,000 by default: 1,000 in each reading); a failure names
// the seed, which FuzzGeneratedQueries replays.
func TestGeneratedQueriesAnswerAsThePlainestLayout(t *testing.T) {
	n := 2000
	if v := os.Getenv("DIFFERENTIAL_QUERIES"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			t.Fatal(err)
		}
	}
	newDifferential(t).compareMany(t, n)
}

func TestPagesOfLargePostsEndOnlyWithTheLastPost(t *testing.T) {
	e, _ := setup(t, store.Dataset{}, resolver.CoreRoutes, bytesNotTime)
	createUser(t, e, "u_writer")
	body := strings.Repeat("😀", 20000) // 80,000 bytes: DynamoDB's 1 MB page holds 13
	for i := range 25 {
		mustRun(t, e, executor.Request{Identity: signedIn("u_writer"),
			Query:     `mutation($t: String!, $b: String!) { createPost(input: {title: $t, body: $b}) { id } }`,
			Variables: map[string]any{"t": fmt.Sprint("Post ", i), "b": body}})
	}
	seen := map[string]bool{}
	largest, pages := 0, 0
	var token any
	for {
		data, cost := mustRun(t, e, executor.Request{
			Query:     `query($t: String) { user(id: "u_writer") { posts(nextToken: $t) { items { id body author { name } } nextToken } } }`,
			Variables: map[string]any{"t": token}})
		pages++
		largest = max(largest, cost.LargestPayloadBytes)
		for _, item := range get(data, "user", "posts", "items").([]any) {
			id := get(item, "id").(string)
			if seen[id] || get(item, "body") != body || get(item, "author", "name") != "N" {
				t.Fatalf("page %d: post %s repeated or changed", pages, id)
			}
			seen[id] = true
		}
		if token = get(data, "user", "posts", "nextToken"); token == nil || pages > 30 {
			break
		}
	}
	if len(seen) != 25 {
		t.Errorf("paging until nextToken is null gave %d distinct posts, want 25", len(seen))
	}
	if largest > payload.MaxBytes {
		t.Errorf("largest Lambda payload %d bytes, over %d", largest, payload.MaxBytes)
	}
	t.Logf("25 posts of 80 kB: %d pages, largest Lambda payload %d bytes", pages, largest)
}

// Under the first-occurrence reading a selection of titles alone cannot
// prove that nothing else is selected, so a page of large posts is read
// whole and cut by its whole size: more pages than the every-occurrence
// reading's, and every post still arrives once.
func TestPagesOfLargePostsUnderEachReading(t *testing.T) {
	body := strings.Repeat("😀", 20000)
	pages := map[appsync.Reading]int{}
	for _, r := range []appsync.Reading{appsync.EveryOccurrence, appsync.FirstOccurrence} {
		e, _ := setupWith(t, store.Dataset{}, resolver.CoreRoutes, []executor.Option{executor.WithSelectionReading(r), bytesNotTime},
			[]resolver.Option{resolver.WithSelectionReading(r)})
		createUser(t, e, "u_writer")
		for i := range 25 {
			mustRun(t, e, executor.Request{Identity: signedIn("u_writer"),
				Query:     `mutation($t: String!, $b: String!) { createPost(input: {title: $t, body: $b}) { id } }`,
				Variables: map[string]any{"t": fmt.Sprint("Post ", i), "b": body}})
		}
		seen := map[string]bool{}
		var token any
		for pages[r] < 30 {
			data, _ := mustRun(t, e, executor.Request{
				Query:     `query($t: String) { user(id: "u_writer") { posts(nextToken: $t) { items { id title } nextToken } } }`,
				Variables: map[string]any{"t": token}})
			pages[r]++
			for _, item := range get(data, "user", "posts", "items").([]any) {
				if id := get(item, "id").(string); seen[id] {
					t.Fatalf("%s: page %d repeats post %s", r, pages[r], id)
				}
				seen[get(item, "id").(string)] = true
			}
			if token = get(data, "user", "posts", "nextToken"); token == nil {
				break
			}
		}
		if len(seen) != 25 {
			t.Errorf("%s: %d distinct posts in %d pages, want 25", r, len(seen), pages[r])
		}
	}
	if pages[appsync.EveryOccurrence] != 2 || pages[appsync.FirstOccurrence] <= 2 {
		t.Errorf("pages of 25 posts of 80 kB, titles selected: %v; want 2 under every-occurrence, more under first-occurrence", pages)
	}
	t.Logf("pages of 25 posts of 80 kB, titles selected: %v", pages)
	doc, err := os.ReadFile("../../docs/deploying.md")
	want := fmt.Sprintf("titles selected, take %d pages against %d", pages[appsync.FirstOccurrence], pages[appsync.EveryOccurrence])
	if err != nil || !strings.Contains(strings.ReplaceAll(string(doc), "\n", " "), want) {
		t.Errorf("docs/deploying.md does not say %q (%v)", want, err)
	}
}

func TestEightHundredLargeCommentsAllArrive(t *testing.T) {
	e, _ := setup(t, store.Dataset{}, resolver.CoreRoutes, bytesNotTime)
	commenters := []string{"u_c1", "u_c2", "u_c3", "u_c4"}
	for _, u := range append([]string{"u_author"}, commenters...) {
		createUser(t, e, u)
	}
	body := strings.Repeat("<", 2000) // 6 bytes each through encoding/json's default
	ids := make([]any, 8)
	for i := range ids {
		data, _ := mustRun(t, e, executor.Request{Identity: signedIn("u_author"),
			Query: fmt.Sprintf(`mutation { createPost(input: {title: "P%d", body: "b"}) { id } }`, i)})
		ids[i] = get(data, "createPost", "id")
	}
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() {
			for j := range 100 {
				resp := e.Execute(context.Background(), executor.Request{Identity: signedIn(commenters[j%4]),
					Query:     `mutation($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id } }`,
					Variables: map[string]any{"p": id, "b": body}})
				if len(resp.Errors) > 0 {
					t.Errorf("createComment: %+v", resp.Errors)
					return
				}
			}
		})
	}
	wg.Wait()
	data, cost := mustRun(t, e, executor.Request{Query: postsWithComments, Variables: map[string]any{"ids": ids}})
	bodies, largest := commentsOf(t, e, get(data, "posts").([]any))
	largest = max(largest, cost.LargestPayloadBytes)
	total := 0
	for id, bs := range bodies {
		total += len(bs)
		for _, b := range bs {
			if b != body {
				t.Fatalf("post %s: a comment body changed", id)
			}
		}
	}
	if total != 800 {
		t.Errorf("got %d comments, want 800", total)
	}
	if largest > payload.MaxBytes {
		t.Errorf("largest Lambda payload %d bytes, over %d", largest, payload.MaxBytes)
	}
	t.Logf("8 posts x 100 comments of 2,000 '<': first query %+v; largest payload %d bytes", cost, largest)
}
