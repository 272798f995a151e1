package resolver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"slices"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// withSelection sets the selection of an event as AppSync does: the list
// (aliases, expanded fragments) and the GraphQL text (arguments, unexpanded
// named fragments).
func withSelection(e appsync.Event, gql string, list ...string) appsync.Event {
	e.Info.SelectionSetGraphQL = gql
	e.Info.SelectionSetList, _ = json.Marshal(list)
	return e
}

// child builds the event AppSync sends for a nested field: source is the
// parent's whole result.
func child(parent, field string, args any, source json.RawMessage, list ...string) appsync.Event {
	e := ev(parent, field, args, nil, list...)
	e.Source = source
	return e
}

type commentPage struct {
	Items     []store.Comment `json:"items"`
	NextToken *string         `json:"nextToken"`
}

func decodePage(t *testing.T, raw json.RawMessage) commentPage {
	t.Helper()
	var p commentPage
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("decode %s: %v", raw, err)
	}
	return p
}

// postWithComments is the sample data with n comments on the hello post.
func postWithComments(n int) store.Dataset {
	d := sample.Data()
	d.Comments = nil
	for i := range n {
		d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HWN00000000000000000%04d", i), PostID: sample.HelloPost,
			AuthorID: []string{sample.Bob, sample.Carol}[i%2], Body: fmt.Sprint("comment ", i), CreatedAt: "2024-04-30T00:00:00.000Z"})
	}
	d.Posts[0].CommentCount = n
	return d
}

func TestPostAndCommentsInOneQuery(t *testing.T) {
	h := directHandler(t, postWithComments(5))
	q := withSelection(ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil),
		"{\n  title\n  comments {\n    items {\n      body\n    }\n  }\n}",
		"title", "comments", "comments/items", "comments/items/body")
	post, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if calls := m.Calls(); len(calls) != 1 || calls[0].Operation != "Query" || calls[0].Index != "" {
		t.Errorf("Query.post calls = %+v, want exactly one Query of the partition", calls)
	}
	comments := child("Post", "comments", map[string]any{}, post, "items", "items/body")
	got, ierr, m := invoke(t, h, mustJSON(t, comments))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if m.Total() != 0 {
		t.Errorf("Post.comments after a prefetch made %d requests, want 0", m.Total())
	}
	// The same page as Post.comments reads on its own.
	direct, _, m := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{}, mustJSON(t, store.Post{ID: sample.HelloPost}))))
	if m.Count("Query") != 1 || !reflect.DeepEqual(decodePage(t, got), decodePage(t, direct)) {
		t.Errorf("prefetched page %s differs from queried page %s", got, direct)
	}
	if p := decodePage(t, got); len(p.Items) != 5 || p.NextToken != nil {
		t.Errorf("page = %d items, nextToken %v; want 5 and none", len(p.Items), p.NextToken)
	}
}

func TestPostWithoutCommentsReadsOnlyThePost(t *testing.T) {
	h := newHandler(t, postWithComments(50))
	q := withSelection(ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil), "{\n  title\n}", "title")
	out, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil {
		t.Fatal(ierr)
	}
	calls := m.Calls()
	if len(calls) != 1 || calls[0].Operation != "Query" || calls[0].Items != 2 || calls[0].Read != 0.5 {
		t.Errorf("calls = %+v, want one Query of the post and its counter at 0.5 RCU", calls)
	}
	var p map[string]any
	json.Unmarshal(out, &p)
	if p["title"] != "Hello" || p["prefetchedComments"] != nil {
		t.Errorf("reply %s", out)
	}
}

func TestAliasesWithDifferentLimits(t *testing.T) {
	h := directHandler(t, postWithComments(7))
	q := withSelection(ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil),
		"{\n  a: comments(limit: 2) {\n    items {\n      id\n    }\n    nextToken\n  }\n  b: comments(limit: 5) {\n    items {\n      id\n    }\n    nextToken\n  }\n}",
		"a", "a/items", "a/items/id", "a/nextToken", "b", "b/items", "b/items/id", "b/nextToken")
	post, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil {
		t.Fatal(ierr)
	}
	total := m.Total()
	for _, limit := range []int{2, 5} {
		got, ierr, m := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{"limit": limit}, post, "items", "items/id", "nextToken")))
		if ierr != nil {
			t.Fatal(ierr)
		}
		total += m.Total()
		want, _, _ := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{"limit": limit}, mustJSON(t, store.Post{ID: sample.HelloPost}))))
		if !reflect.DeepEqual(decodePage(t, got), decodePage(t, want)) {
			t.Errorf("limit %d: %s, want %s", limit, got, want)
		}
		if p := decodePage(t, got); len(p.Items) != limit || p.NextToken == nil {
			t.Errorf("limit %d: %d items, nextToken %v", limit, len(p.Items), p.NextToken)
		}
	}
	if total > 2 {
		t.Errorf("%d requests for the post and two aliases, want at most 2 (one extra Query)", total)
	}
	t.Logf("post + two aliases: %d DynamoDB requests", total)
}

func TestNamedFragmentDoesNotShortCircuitWrongly(t *testing.T) {
	h := newHandler(t, postWithComments(4))
	// ...PostFields = { title comments(limit: 3) { items { id } nextToken } }: AppSync
	// expands it in the list but not in the text, so the limit cannot be read.
	q := withSelection(ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil),
		"{\n  ...PostFields\n}", "title", "comments", "comments/items", "comments/items/id", "comments/nextToken")
	post, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if m.Count("Query") != 1 || m.Total() != 1 || m.Calls()[0].Items != 2 {
		t.Errorf("Query.post calls = %+v, want the post alone (one Query of its two items)", m.Calls())
	}
	got, ierr, m := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{"limit": 3}, post, "items", "items/id", "nextToken")))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if p := decodePage(t, got); m.Count("Query") != 1 || len(p.Items) != 3 || p.NextToken == nil {
		t.Errorf("Post.comments = %s with %d queries; want 3 items, a nextToken, one Query", got, m.Count("Query"))
	}
}

func TestVariableLimitAndPagingOn(t *testing.T) {
	const n = 7
	h := directHandler(t, postWithComments(n))
	q := withSelection(ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil),
		"{\n  comments(limit: $n) {\n    items {\n      id\n    }\n    nextToken\n  }\n}",
		"comments", "comments/items", "comments/items/id", "comments/nextToken")
	q.Info.Variables = json.RawMessage(`{"n": 3}`)
	post, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil || m.Count("Query") != 1 {
		t.Fatalf("Query.post: %v, calls %+v", ierr, m.Calls())
	}
	first, _, m := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{"limit": 3}, post)))
	if m.Total() != 0 {
		t.Errorf("first page made %d requests, want 0", m.Total())
	}
	page := decodePage(t, first)
	if len(page.Items) != 3 || page.NextToken == nil {
		t.Fatalf("first page %s: want 3 items and a nextToken (the prefetch honours $n)", first)
	}
	var seen []string
	for _, c := range page.Items {
		seen = append(seen, c.ID)
	}
	for pages := 1; page.NextToken != nil; pages++ {
		if pages > n {
			t.Fatal("paging does not end")
		}
		raw, ierr, _ := invoke(t, h, mustJSON(t, child("Post", "comments", map[string]any{"limit": 3, "nextToken": *page.NextToken}, post)))
		if ierr != nil {
			t.Fatalf("page %d: %v", pages+1, ierr)
		}
		page = decodePage(t, raw)
		for _, c := range page.Items {
			seen = append(seen, c.ID)
		}
	}
	if len(seen) != n || !slices.IsSorted(seen) || len(slices.Compact(slices.Clone(seen))) != n {
		t.Errorf("paged ids %v: want all %d comments once, in order", seen, n)
	}
}

func TestUserAndFollowingInOneQuery(t *testing.T) {
	d := sample.Data()
	d.Follows = append(d.Follows, store.Follow{FollowerID: sample.Alice, FollowedID: sample.Carol, CreatedAt: "2024-04-29T09:30:00.000Z"})
	d.Users[0].FollowingCount = 2
	d.Users[2].FollowerCount = 1
	h := directHandler(t, d)
	q := withSelection(ev("Query", "user", map[string]any{"id": sample.Alice}, nil),
		"{\n  name\n  following {\n    items {\n      handle\n    }\n  }\n}", "name", "following", "following/items", "following/items/handle")
	user, ierr, m := invoke(t, h, mustJSON(t, q))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if calls := m.Calls(); len(calls) != 1 || calls[0].Operation != "Query" || calls[0].Index != "" {
		t.Errorf("Query.user calls = %+v, want one Query of the user's partition", calls)
	}
	out, ierr, m := invoke(t, h, mustJSON(t, []appsync.Event{child("User", "following", map[string]any{}, user, "items", "items/handle")}))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if m.Count("Query") != 0 || m.Count("BatchGetItem") != 1 {
		t.Errorf("User.following calls = %+v, want only the BatchGetItem of the users", m.Calls())
	}
	var items []struct {
		Data struct{ Items []store.User }
	}
	json.Unmarshal(out, &items)
	if len(items) != 1 || len(items[0].Data.Items) != 2 || items[0].Data.Items[0].Handle != "bob" || items[0].Data.Items[1].Handle != "carol" {
		t.Errorf("following = %s", out)
	}
}

func TestFollowConnectionsBatchTheirUsers(t *testing.T) {
	d := sample.Data()
	var batch []appsync.Event
	for i := range 10 {
		id := fmt.Sprintf("fan%02d", i)
		d.Users = append(d.Users, store.User{ID: id, Handle: id, Name: id, CreatedAt: "2024-05-01T00:00:00.000Z", FollowingCount: 2})
		d.Follows = append(d.Follows, store.Follow{FollowerID: id, FollowedID: sample.Bob}, store.Follow{FollowerID: id, FollowedID: sample.Carol})
		batch = append(batch, withSelection(ev("User", "following", nil, store.User{ID: id}), "{\n  items {\n    name\n  }\n}", "items", "items/name"))
	}
	h := newHandler(t, d)
	out, ierr, m := invoke(t, h, mustJSON(t, batch))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if m.Count("Query") != 10 || m.Count("BatchGetItem") != 1 || m.Calls()[len(m.Calls())-1].Keys != 2 {
		t.Errorf("calls = %+v, want 10 Queries and one BatchGetItem of 2 keys", m.Calls())
	}
	var items []struct {
		Data struct{ Items []store.User }
	}
	json.Unmarshal(out, &items)
	for i, it := range items {
		if len(it.Data.Items) != 2 || it.Data.Items[0].Name != "Bob" {
			t.Errorf("item %d: %+v", i, it)
		}
	}
}

func TestCommentAuthorBatchOf200(t *testing.T) {
	d := sample.Data()
	for i := range 120 {
		id := fmt.Sprintf("author%03d", i)
		d.Users = append(d.Users, store.User{ID: id, Handle: id, Name: "Author " + id, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	batch := make([]appsync.Event, 200)
	for i := range batch {
		batch[i] = withSelection(ev("Comment", "author", nil, store.Comment{ID: fmt.Sprint("c", i), PostID: sample.HelloPost, AuthorID: fmt.Sprintf("author%03d", i%120)}), "{\n  name\n}", "name")
	}
	check := func(t *testing.T, h lambda.Handler) int {
		out, ierr, m := invoke(t, h, mustJSON(t, batch))
		if ierr != nil {
			t.Fatal(ierr)
		}
		var items []struct{ Data store.User }
		if err := json.Unmarshal(out, &items); err != nil || len(items) != 200 {
			t.Fatalf("reply: %d items, %v", len(items), err)
		}
		for i, it := range items {
			if want := fmt.Sprintf("author%03d", i%120); it.Data.ID != want {
				t.Fatalf("item %d: author %q, want %q", i, it.Data.ID, want)
			}
		}
		return m.Count("BatchGetItem")
	}
	seeded, _ := storetest.NewStore(t, d)
	if n := check(t, lambda.NewHandler(resolver.New(seeded, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence)))); n != 2 {
		t.Errorf("%d BatchGetItem calls for 120 distinct authors, want 2", n)
	}
	// With DynamoDB leaving half of every answer unprocessed, the reply is still complete.
	client := storetest.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, storetest.HalfUnprocessed) })
	busy := store.New(client, seeded.Table(), cursor.New(storetest.TokenKey))
	n := check(t, lambda.NewHandler(resolver.New(busy, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))))
	t.Logf("with half of the keys unprocessed each time: %d BatchGetItem calls", n)
}

func TestConnectionsReadOnlySelectedAttributes(t *testing.T) {
	d := sample.Data()
	long := make([]byte, 15000)
	for i := range long {
		long[i] = 'x'
	}
	for i := range 5 {
		d.Posts = append(d.Posts, store.Post{ID: fmt.Sprintf("01HWP00000000000000000000%d", i), AuthorID: sample.Bob, Title: fmt.Sprint("Long ", i),
			Body: string(long), CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z"})
	}
	h := newHandler(t, d)
	titles := withSelection(ev("User", "posts", nil, store.User{ID: sample.Bob}), "{\n  items {\n    title\n  }\n}", "items", "items/title")
	out, ierr, m := invoke(t, h, mustJSON(t, titles))
	if ierr != nil {
		t.Fatal(ierr)
	}
	var page struct{ Items []map[string]any }
	json.Unmarshal(out, &page)
	if len(page.Items) != 5 || page.Items[0]["title"] != "Long 4" || page.Items[0]["authorId"] != sample.Bob {
		t.Errorf("titles only: %.300s", out)
	}
	for _, unread := range []string{"body", "updatedAt", "commentCount"} {
		if v, ok := page.Items[0][unread]; ok {
			t.Errorf("titles only: %s, which was not read, is in the reply as %q", unread, v)
		}
	}
	narrow, narrowRCU := len(out), m.Summary().Read
	bodies := withSelection(ev("User", "posts", nil, store.User{ID: sample.Bob}), "{\n  items {\n    title\n    body\n  }\n}", "items", "items/title", "items/body")
	out, _, m = invoke(t, h, mustJSON(t, bodies))
	json.Unmarshal(out, &page)
	if len(page.Items) != 5 || len(page.Items[0]["body"].(string)) != len(long) {
		t.Errorf("with bodies: %.200s", out)
	}
	// DynamoDB charges capacity for the whole item either way; the projection
	// saves the bytes sent to the Lambda and back to AppSync.
	t.Logf("User.posts of 5 posts with 15 kB bodies: titles only %d bytes (%.1f RCU), with bodies %d bytes (%.1f RCU)",
		narrow, narrowRCU, len(out), m.Summary().Read)
	if narrow*10 > len(out) {
		t.Errorf("titles-only reply is %d bytes, not much smaller than %d with bodies", narrow, len(out))
	}
}

func TestPostsWithTheFieldAroundItsSelectionReadTheSelectedAttributes(t *testing.T) {
	h := sampleHandler(t)
	e := withSelection(ev("Query", "posts", map[string]any{"ids": []string{sample.HelloPost}}, nil),
		"mine: posts(ids: $ids) { title body }", "title", "body")
	e.Info.Variables = json.RawMessage(`{"ids":["` + sample.HelloPost + `"]}`)
	out, ierr, _ := invoke(t, h, mustJSON(t, e))
	var posts []map[string]any
	if ierr != nil || json.Unmarshal(out, &posts) != nil || len(posts) != 1 || posts[0]["title"] != "Hello" || posts[0]["body"] == nil {
		t.Errorf("reply %s, error %v; want the title and the body", out, ierr)
	}
}
