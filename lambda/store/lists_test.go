package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// queries records every Query the store sends.
type queries struct {
	store.API
	mu  sync.Mutex
	ins []*dynamodb.QueryInput
}

func (q *queries) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	q.mu.Lock()
	q.ins = append(q.ins, in)
	q.mu.Unlock()
	return q.API.Query(ctx, in, opts...)
}

func (q *queries) last() *dynamodb.QueryInput {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.ins[len(q.ins)-1]
}

// listStore is a store over d whose Queries are recorded.
func listStore(t *testing.T, d store.Dataset) (*store.Store, *queries) {
	t.Helper()
	base, client := storetest.NewStore(t, d)
	rec := &queries{API: client}
	return store.New(rec, base.Table(), cursor.New([]byte(cursor.DevelopmentKey))), rec
}

func commentID(c store.Comment) string { return c.ID }
func postID(p store.Post) string       { return p.ID }

// Both directions and ranges, followed to the end, return every item in
// range once, in order; each is one Query whose key condition holds the
// range and whose ScanIndexForward holds the order, never a filter.
func TestOrdersAndRangesAreKeyConditions(t *testing.T) {
	d := sample.Blog(3, 45, 7)
	s, rec := listStore(t, d)
	post := d.Posts[len(d.Posts)-1]
	var all []store.Comment // oldest first
	for _, c := range d.Comments {
		if c.PostID == post.ID {
			all = append(all, c)
		}
	}
	at := func(c store.Comment) time.Time { t, _ := time.Parse(time.RFC3339, c.CreatedAt); return t }
	ids := func(cs []store.Comment) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	reversed := func(cs []store.Comment) []store.Comment { r := slices.Clone(cs); slices.Reverse(r); return r }
	ctx := t.Context()
	fetch := func(r store.PageRequest) (store.Page[store.Comment], error) { return s.CommentsOnPost(ctx, post.ID, r) }
	for _, tc := range []struct {
		name string
		req  store.PageRequest
		want []store.Comment
	}{
		{"default (oldest first)", store.PageRequest{Limit: 10}, all},
		{"oldest first", store.PageRequest{Limit: 7, Order: store.OldestFirst}, all},
		{"newest first", store.PageRequest{Limit: 10, Order: store.NewestFirst}, reversed(all)},
		// Exclusive bounds: the comments at exactly after and before are out.
		{"after", store.PageRequest{Limit: 10, After: at(all[9])}, all[10:]},
		{"before", store.PageRequest{Limit: 10, Before: at(all[30])}, all[:30]},
		{"between, newest first", store.PageRequest{Limit: 4, Order: store.NewestFirst, After: at(all[4]), Before: at(all[20])}, reversed(all[5:20])},
		{"a millisecond inside", store.PageRequest{Limit: 50, After: at(all[4]).Add(-time.Millisecond), Before: at(all[6]).Add(time.Millisecond)}, all[4:7]},
		{"nothing between", store.PageRequest{Limit: 5, After: at(all[4]), Before: at(all[5])}, nil},
	} {
		got := storetest.IDs(t, fetch, tc.req, commentID)
		if !slices.Equal(got, ids(tc.want)) {
			t.Errorf("%s: %d comments %v\nwant %d %v", tc.name, len(got), got, len(tc.want), ids(tc.want))
		}
		in := rec.last()
		cond := aws.ToString(in.KeyConditionExpression)
		ranged := !tc.req.After.IsZero() || !tc.req.Before.IsZero()
		if in.FilterExpression != nil || ranged != strings.Contains(cond, "BETWEEN") || aws.ToBool(in.ScanIndexForward) == (tc.req.Order == store.NewestFirst) {
			t.Errorf("%s: Query %q, filter %v, forward %v", tc.name, cond, in.FilterExpression, aws.ToBool(in.ScanIndexForward))
		}
	}

	// The author's posts and comments, newest first by default.
	posts := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Post], error) {
		return s.PostsByAuthor(ctx, sample.Alice, false, r)
	},
		store.PageRequest{Limit: 2}, postID)
	wantPosts := []string{d.Posts[3].ID, d.Posts[2].ID, d.Posts[1].ID, sample.HelloPost}
	if !slices.Equal(posts, wantPosts) {
		t.Errorf("alice's posts newest first = %v, want %v", posts, wantPosts)
	}
	oldest := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Post], error) {
		return s.PostsByAuthor(ctx, sample.Alice, false, r)
	},
		store.PageRequest{Limit: 3, Order: store.OldestFirst, After: time.Date(2024, 5, 1, 8, 0, 0, 0, time.UTC)}, postID)
	if !slices.Equal(oldest, []string{d.Posts[2].ID, d.Posts[3].ID}) {
		t.Errorf("alice's posts after 08:00, oldest first = %v", oldest)
	}
	readerComments := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Comment], error) {
		return s.CommentsByAuthor(ctx, "u_reader01", r)
	}, store.PageRequest{Limit: 5, Order: store.OldestFirst}, commentID)
	if len(readerComments) != 3*45/7+1 || !slices.IsSorted(readerComments) {
		t.Errorf("reader01's comments oldest first: %d %v", len(readerComments), readerComments)
	}
}

// A token works only with the arguments it was issued for.
func TestTokensAreBoundToTheirArguments(t *testing.T) {
	d := sample.Blog(2, 30, 3)
	s, _ := listStore(t, d)
	ctx := t.Context()
	post := d.Posts[len(d.Posts)-1].ID
	after := time.Date(2024, 5, 1, 9, 5, 0, 0, time.UTC)
	first := store.PageRequest{Limit: 5, Order: store.NewestFirst, After: after}
	page, err := s.CommentsOnPost(ctx, post, first)
	if err != nil || page.NextToken == nil {
		t.Fatalf("first page: %v, %v", page.NextToken, err)
	}
	same := first
	same.NextToken = *page.NextToken
	if _, err := s.CommentsOnPost(ctx, post, same); err != nil {
		t.Fatalf("the same arguments: %v", err)
	}
	for name, change := range map[string]func(*store.PageRequest){
		"other order":  func(r *store.PageRequest) { r.Order = store.OldestFirst },
		"no range":     func(r *store.PageRequest) { r.After = time.Time{} },
		"other range":  func(r *store.PageRequest) { r.After = after.Add(time.Minute) },
		"a new bound":  func(r *store.PageRequest) { r.Before = after.Add(time.Hour) },
		"default sort": func(r *store.PageRequest) { r.Order = store.DefaultOrder },
	} {
		r := same
		change(&r)
		if _, err := s.CommentsOnPost(ctx, post, r); !errs.Is(err, errs.InvalidNextToken) {
			t.Errorf("%s: err = %v, want InvalidNextToken", name, err)
		}
	}
	// The defaults, however asked, are one query: a token from one serves the other.
	page, _ = s.CommentsOnPost(ctx, post, store.PageRequest{Limit: 5})
	explicit := store.PageRequest{Limit: 5, Order: store.OldestFirst, NextToken: *page.NextToken}
	if _, err := s.CommentsOnPost(ctx, post, explicit); err != nil {
		t.Errorf("a default-order token with the default given: %v", err)
	}
	// Drafts and published posts are two lists.
	pub, _ := s.PostsByAuthor(ctx, sample.Alice, false, store.PageRequest{Limit: 1})
	if _, err := s.PostsByAuthor(ctx, sample.Alice, true, store.PageRequest{Limit: 1, NextToken: *pub.NextToken}); !errs.Is(err, errs.InvalidNextToken) {
		t.Errorf("a published posts' token for drafts: %v", err)
	}
}

// Drafts: not counted, not listed with the published posts, listed apart;
// published once, by their author, at the place of their publication time.
func TestDraftsAndPublishing(t *testing.T) {
	d := sample.Blog(2, 0, 1)
	now := time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
	s, _ := storetest.NewStore(t, d, store.WithClock(func() time.Time { now = now.Add(time.Second); return now }))
	ctx := t.Context()
	draft, err := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "Draft", Body: "Not yet.", Draft: true})
	if err != nil || draft.Status != store.StatusDraft {
		t.Fatalf("CreatePost(draft) = %+v, %v", draft, err)
	}
	later, err := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "Published", Body: "Now."})
	if err != nil || later.Status != store.StatusPublished {
		t.Fatalf("CreatePost = %+v, %v", later, err)
	}
	count := func() int { u, _ := s.User(ctx, sample.Alice); return u.PostCount }
	list := func(drafts bool) []string {
		return storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Post], error) {
			return s.PostsByAuthor(ctx, sample.Alice, drafts, r)
		},
			store.PageRequest{Limit: 10}, postID)
	}
	if count() != 4 || slices.Contains(list(false), draft.ID) || !slices.Equal(list(true), []string{draft.ID}) {
		t.Fatalf("after a draft: count %d, published %v, drafts %v", count(), list(false), list(true))
	}
	if _, err := s.CreateComment(ctx, sample.Bob, draft.ID, "early"); !errs.Is(err, errs.NotFound) {
		t.Errorf("a comment on a draft: %v, want NotFound", err)
	}
	// Someone else's draft is absent to them: as for an ID that is not there.
	if _, err := s.PublishPost(ctx, sample.Bob, draft.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("bob publishes alice's draft: %v, want NotFound", err)
	}
	if _, err := s.DeletePost(ctx, sample.Bob, draft.ID); !errs.Is(err, errs.NotFound) {
		t.Errorf("bob deletes alice's draft: %v, want NotFound", err)
	}
	title := "mine now"
	if _, err := s.UpdatePost(ctx, sample.Bob, draft.ID, store.PostEdit{Title: &title}); !errs.Is(err, errs.NotFound) {
		t.Errorf("bob updates alice's draft: %v, want NotFound", err)
	}
	p, err := s.PublishPost(ctx, sample.Alice, draft.ID)
	if err != nil || p.Status != store.StatusPublished {
		t.Fatalf("PublishPost = %+v, %v", p, err)
	}
	if _, err := s.PublishPost(ctx, sample.Alice, draft.ID); !errs.Is(err, errs.Conflict) {
		t.Errorf("publishing twice: %v, want Conflict", err)
	}
	if _, err := s.PublishPost(ctx, sample.Alice, "01HWNOSUCHPOST000000000000"); !errs.Is(err, errs.NotFound) {
		t.Errorf("publishing nothing: %v", err)
	}
	// Published after "later" was created: newest first it comes first.
	if got := list(false); count() != 5 || len(list(true)) != 0 || got[0] != draft.ID || got[1] != later.ID {
		t.Errorf("after publishing: count %d, published %v, drafts %v", count(), got, list(true))
	}
	if _, err := s.CreateComment(ctx, sample.Bob, draft.ID, "now"); err != nil {
		t.Errorf("a comment on the published post: %v", err)
	}
	// Deleting a draft leaves the count; deleting a published post lowers it.
	another, _ := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "Draft 2", Body: "x", Draft: true})
	if _, err := s.DeletePost(ctx, sample.Alice, another.ID); err != nil || count() != 5 {
		t.Errorf("delete a draft: %v, count %d", err, count())
	}
	if _, err := s.DeletePost(ctx, sample.Alice, draft.ID); err != nil || count() != 4 {
		t.Errorf("delete a published post: %v, count %d", err, count())
	}
}

// Publishing and deleting drafts at the same time keeps postCount equal to
// the published posts that remain.
func TestPublishAndDeleteConcurrently(t *testing.T) {
	s, client := storetest.NewStore(t, sample.Data())
	ctx := t.Context()
	const n = 30
	var drafts []string
	for range n {
		p, err := s.CreatePost(ctx, sample.Bob, store.NewPost{Title: "d", Body: "b", Draft: true})
		if err != nil {
			t.Fatal(err)
		}
		drafts = append(drafts, p.ID)
	}
	var wg sync.WaitGroup
	for i, id := range drafts {
		wg.Go(func() {
			if _, err := s.PublishPost(ctx, sample.Bob, id); err != nil && !errs.Is(err, errs.NotFound) {
				t.Errorf("publish: %v", err)
			}
		})
		if i%2 == 0 {
			wg.Go(func() {
				if _, err := s.DeletePost(ctx, sample.Bob, id); err != nil && !errs.Is(err, errs.NotFound) {
					t.Errorf("delete: %v", err)
				}
			})
		}
	}
	wg.Wait()
	published := storetest.Count(t, client, s.Table(), store.GSI1, store.AttrGSI1PK, store.AuthorPK(sample.Bob), store.AttrGSI1SK, store.PostPrefix)
	remaining := storetest.Count(t, client, s.Table(), store.GSI1, store.AttrGSI1PK, store.AuthorPK(sample.Bob), store.AttrGSI1SK, store.DraftPrefix)
	u, _ := s.User(ctx, sample.Bob)
	if u.PostCount != published || published+remaining != n/2 {
		t.Errorf("postCount %d; %d published and %d drafts remain of %d (want %d in all)", u.PostCount, published, remaining, n, n/2)
	}
}

// Items written before drafts existed (no status, GSI1 sort key POST#<id>)
// are published posts: listed, ranged, counted and deleted as such, with no
// backfill.
func TestPostsWrittenBeforeDraftsStillWork(t *testing.T) {
	s, client := storetest.NewStore(t, sample.Data())
	ctx := t.Context()
	id := "01HWZZ0000000000000000OLD0"
	old := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: store.PostPK(id)}, "sk": &types.AttributeValueMemberS{Value: store.SKMetadata},
		"gsi1pk": &types.AttributeValueMemberS{Value: store.AuthorPK(sample.Bob)}, "gsi1sk": &types.AttributeValueMemberS{Value: "POST#" + id},
		"id": &types.AttributeValueMemberS{Value: id}, "authorId": &types.AttributeValueMemberS{Value: sample.Bob},
		"title": &types.AttributeValueMemberS{Value: "Old"}, "body": &types.AttributeValueMemberS{Value: "b"},
		"createdAt": &types.AttributeValueMemberS{Value: "2024-05-03T00:00:00.000Z"}, "updatedAt": &types.AttributeValueMemberS{Value: "2024-05-03T00:00:00.000Z"},
		"commentCount": &types.AttributeValueMemberN{Value: "0"},
	}
	counter := map[string]types.AttributeValue{ // its counter, as docs/table.md's migration writes it
		"pk": old["pk"], "sk": &types.AttributeValueMemberS{Value: store.SKCount}, "authorId": old["authorId"], "commentCount": old["commentCount"],
	}
	for _, item := range []map[string]types.AttributeValue{old, counter} {
		if _, err := client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(s.Table()), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.Table()),
		Key:              map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: store.UserPK(sample.Bob)}, "sk": &types.AttributeValueMemberS{Value: store.SKCount}},
		UpdateExpression: aws.String("ADD postCount :one"), ExpressionAttributeValues: map[string]types.AttributeValue{":one": &types.AttributeValueMemberN{Value: "1"}}}); err != nil {
		t.Fatal(err)
	}
	page, err := s.PostsByAuthor(ctx, sample.Bob, false, store.PageRequest{Limit: 5, After: time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil || len(page.Items) != 1 || page.Items[0].ID != id || !page.Items[0].Published() {
		t.Fatalf("bob's posts since May: %+v, %v", page.Items, err)
	}
	if b, _ := page.Items[0].MarshalJSON(); !strings.Contains(string(b), `"status":"PUBLISHED"`) {
		t.Errorf("an old post reads as %s", b)
	}
	if _, err := s.CreateComment(ctx, sample.Carol, id, "still open"); err != nil {
		t.Errorf("a comment on an old post: %v", err)
	}
	if _, err := s.DeletePost(ctx, sample.Bob, id); err != nil {
		t.Fatalf("delete an old post: %v", err)
	}
	if u, _ := s.User(ctx, sample.Bob); u.PostCount != 0 {
		t.Errorf("bob's postCount after deleting his old post: %d", u.PostCount)
	}
	var left map[string]any
	out, _ := client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.Table()), Key: map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: store.PostPK(id)}, "sk": &types.AttributeValueMemberS{Value: store.SKMetadata}}})
	attributevalue.UnmarshalMap(out.Item, &left)
	if len(left) != 0 {
		t.Errorf("the old post is still there: %v", left)
	}
}

// A post with its first comments, in either order or range: oldest first
// from the start, one Query; otherwise a GetItem and a Query at once.
func TestPostWithCommentsBothWays(t *testing.T) {
	d := sample.Blog(1, 12, 3)
	s, _ := storetest.NewStore(t, d)
	post := d.Posts[len(d.Posts)-1]
	for _, tc := range []struct {
		name  string
		first store.PageRequest
		calls []string
		want  []int // indexes of the comments, in order
	}{
		{"oldest first", store.PageRequest{Limit: 3}, []string{"Query"}, []int{0, 1, 2, 3}},
		{"oldest first, before", store.PageRequest{Limit: 5, Before: mustTime(t, "2024-05-01T08:04:00Z")}, []string{"Query"}, []int{0, 1, 2}},
		{"newest first", store.PageRequest{Limit: 3, Order: store.NewestFirst}, []string{"Query", "Query"}, []int{11, 10, 9}},
		{"after", store.PageRequest{Limit: 2, After: mustTime(t, "2024-05-01T08:10:00Z")}, []string{"Query", "Query"}, []int{10, 11}},
	} {
		ctx, m := metered(t)
		p, pre, err := s.PostWithComments(ctx, post.ID, tc.first, 1<<20)
		if err != nil || p.ID != post.ID {
			t.Fatalf("%s: %+v, %v", tc.name, p, err)
		}
		wantCalls(t, m, tc.calls...)
		var got, want []string
		for _, c := range pre.Items {
			got = append(got, c.ID)
		}
		for _, i := range tc.want[:min(len(tc.want), len(pre.Items))] {
			want = append(want, d.Comments[len(d.Comments)-12+i].ID)
		}
		if len(got) != len(tc.want) || !slices.Equal(got, want) {
			t.Errorf("%s: prefetched %v, want first %v", tc.name, got, want)
		}
		page, ok := s.CommentsFromPrefetch(pre, tc.first)
		queried, err := s.CommentsOnPost(t.Context(), post.ID, tc.first)
		if !ok || err != nil || fmt.Sprint(page.Items) != fmt.Sprint(queried.Items) || (page.NextToken == nil) != (queried.NextToken == nil) ||
			(page.NextToken != nil && *page.NextToken != *queried.NextToken) {
			t.Errorf("%s: the page from the prefetch differs from the queried page (%v)", tc.name, err)
		}
		other := tc.first
		other.Order = map[bool]store.Order{true: store.OldestFirst, false: store.NewestFirst}[tc.first.Order == store.NewestFirst]
		if _, ok := s.CommentsFromPrefetch(pre, other); ok {
			t.Errorf("%s: the prefetch served the other order", tc.name)
		}
	}
}

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// At the limits: 250 comments of 2,000 four-byte characters (2 MB, over
// DynamoDB's 1 MB page), pages of 100, newest first within a range: every
// comment in range arrives once, in order, however the pages are cut.
func TestRangesAtTheLimits(t *testing.T) {
	d := sample.Blog(1, 250, 5)
	body := strings.Repeat("😀", 2000)
	for i := range d.Comments {
		if d.Comments[i].PostID == d.Posts[len(d.Posts)-1].ID {
			d.Comments[i].Body = body
		}
	}
	s, _ := listStore(t, d)
	post := d.Posts[len(d.Posts)-1]
	var in []string // newest first, strictly between the 10th and the 240th comment's times
	var all []store.Comment
	for _, c := range d.Comments {
		if c.PostID == post.ID {
			all = append(all, c)
		}
	}
	after, _ := time.Parse(time.RFC3339, all[9].CreatedAt)
	before, _ := time.Parse(time.RFC3339, all[239].CreatedAt)
	for i := 238; i >= 10; i-- {
		in = append(in, all[i].ID)
	}
	pages := 0
	got := storetest.IDs(t, func(r store.PageRequest) (store.Page[store.Comment], error) {
		pages++
		page, err := s.CommentsOnPost(t.Context(), post.ID, r)
		for _, c := range page.Items {
			if c.Body != body {
				t.Fatalf("comment %s came back with a %d-byte body", c.ID, len(c.Body))
			}
		}
		return page, err
	}, store.PageRequest{Limit: store.MaxLimit, Order: store.NewestFirst, After: after, Before: before}, commentID)
	if !slices.Equal(got, in) {
		t.Errorf("%d comments in %d pages, want the %d in range, newest first", len(got), pages, len(in))
	}
	if pages < 3 {
		t.Errorf("%d pages for 229 comments of 8 kB: DynamoDB's 1 MB page should have cut some", pages)
	}
}
