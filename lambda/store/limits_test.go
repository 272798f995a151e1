package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// manyLargePosts is bob with n posts whose bodies are 20,000 4-byte
// characters (80 kB): DynamoDB's 1 MB Query page holds 13 of them.
func manyLargePosts(n int) store.Dataset {
	d := sample.Data()
	for i := range n {
		d.Posts = append(d.Posts, store.Post{ID: fmt.Sprintf("01HX%022d", i), AuthorID: sample.Bob, Title: fmt.Sprint("P", i),
			Body: strings.Repeat("😀", 20000), CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z"})
	}
	d.Users[1].PostCount = n
	return d
}

func distinct(ids []string) int {
	seen := map[string]bool{}
	for _, id := range ids {
		seen[id] = true
	}
	return len(seen)
}

func TestPageCutByDynamoDBsMegabyteHasANextToken(t *testing.T) {
	s, _ := storetest.NewStore(t, manyLargePosts(25))
	ctx := t.Context()
	first, err := s.PostsByAuthor(ctx, sample.Bob, false, store.PageRequest{Limit: store.DefaultLimit})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Items) >= store.DefaultLimit || first.NextToken == nil {
		t.Fatalf("first page: %d items, nextToken %v; want a short page (1 MB read) with a nextToken", len(first.Items), first.NextToken)
	}
	ids, pages := storetest.Pages(t, func(r store.PageRequest) (store.Page[store.Post], error) {
		return s.PostsByAuthor(ctx, sample.Bob, false, r)
	},
		store.PageRequest{Limit: store.DefaultLimit}, func(p store.Post) string { return p.ID })
	if len(ids) != 25 || distinct(ids) != 25 {
		t.Errorf("%d pages gave %d posts (%d distinct), want 25", pages, len(ids), distinct(ids))
	}
	t.Logf("first page %d of 20 posts of 80 kB, %d pages in all", len(first.Items), pages)
}

func TestPageCutByBytesHasANextToken(t *testing.T) {
	s, _ := storetest.NewStore(t, manyLargePosts(25))
	ctx := t.Context()
	const budget = 300_000
	req := store.PageRequest{Limit: store.MaxLimit, MaxBytes: budget}
	read := func(r store.PageRequest) (store.Page[store.Post], error) {
		page, err := s.PostsByAuthor(ctx, sample.Bob, false, r)
		if size := payload.Size(page.Items); err == nil && size > budget {
			t.Errorf("a page of %d items takes %d bytes, over its budget of %d", len(page.Items), size, budget)
		}
		return page, err
	}
	ids, pages := storetest.Pages(t, read, req, func(p store.Post) string { return p.ID })
	if len(ids) != 25 || distinct(ids) != 25 || pages < 7 {
		t.Errorf("%d pages gave %d posts (%d distinct), want 25 in pages of at most 3", pages, len(ids), distinct(ids))
	}
}

func TestPrefetchCutShortServesAShortPageAndTheRestFollows(t *testing.T) {
	d := sample.Data()
	d.Comments = nil
	for i := range 120 {
		// Comments larger than the API accepts (20 kB), as loaded data may be,
		// so that the 1 MB read limit ends the Query before 102 items.
		d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HY%022d", i), PostID: sample.HelloPost, AuthorID: sample.Bob,
			Body: strings.Repeat("c", 20000), CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	d.Posts[0].CommentCount = 120
	s, _ := storetest.NewStore(t, d)
	ctx := t.Context()
	for _, budget := range []int{payload.MaxBytes, 150_000} {
		_, pre, err := s.PostWithComments(ctx, sample.HelloPost, store.PageRequest{Limit: store.MaxLimit}, budget)
		if err != nil {
			t.Fatal(err)
		}
		if pre.Complete || len(pre.Items) >= store.MaxLimit || payload.Size(pre) > budget {
			t.Fatalf("budget %d: prefetch of %d items (%d bytes), complete %v; want a short, incomplete prefetch within the budget",
				budget, len(pre.Items), payload.Size(pre), pre.Complete)
		}
		page, ok := s.CommentsFromPrefetch(pre, store.PageRequest{Limit: store.MaxLimit})
		if !ok || page.NextToken == nil || len(page.Items) != len(pre.Items) {
			t.Fatalf("budget %d: page from prefetch: ok %v, %d items, nextToken %v", budget, ok, len(page.Items), page.NextToken)
		}
		ids := []string{}
		for _, c := range page.Items {
			ids = append(ids, c.ID)
		}
		rest, _ := storetest.Pages(t, func(r store.PageRequest) (store.Page[store.Comment], error) {
			return s.CommentsOnPost(ctx, sample.HelloPost, r)
		},
			store.PageRequest{Limit: store.MaxLimit, NextToken: *page.NextToken}, func(c store.Comment) string { return c.ID })
		if ids = append(ids, rest...); len(ids) != 120 || distinct(ids) != 120 {
			t.Errorf("budget %d: prefetch and pages gave %d comments (%d distinct), want 120", budget, len(ids), distinct(ids))
		}
	}
}

func TestSignedTokensForOtherKeysAreRefusedWithoutARequest(t *testing.T) {
	s, _ := storetest.NewStore(t, sample.Data())
	codec := cursor.New(storetest.TokenKey)
	str := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	sign := func(scope cursor.Scope, key map[string]types.AttributeValue) string {
		token, err := codec.Encode(scope, key)
		if err != nil {
			t.Fatal(err)
		}
		return token
	}
	commentsScope := cursor.Scope{Query: "Post.comments", Parent: sample.HelloPost}
	postsScope := cursor.Scope{Query: "User.posts", Parent: sample.Alice, Index: store.GSI1}
	cases := map[string]func(context.Context, string) error{
		"a user's metadata on Post.comments": func(ctx context.Context, _ string) error {
			_, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 5,
				NextToken: sign(commentsScope, map[string]types.AttributeValue{"pk": str(store.UserPK(sample.Alice)), "sk": str(store.SKMetadata)})})
			return err
		},
		"the post's own metadata on Post.comments": func(ctx context.Context, _ string) error {
			_, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 5,
				NextToken: sign(commentsScope, map[string]types.AttributeValue{"pk": str(store.PostPK(sample.HelloPost)), "sk": str(store.SKMetadata)})})
			return err
		},
		"an extra attribute on Post.comments": func(ctx context.Context, _ string) error {
			_, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 5,
				NextToken: sign(commentsScope, map[string]types.AttributeValue{"pk": str(store.PostPK(sample.HelloPost)),
					"sk": str(store.CommentSK(sample.BobComment)), "gsi1pk": str("x")})})
			return err
		},
		"bob's partition on alice's User.posts": func(ctx context.Context, _ string) error {
			_, err := s.PostsByAuthor(ctx, sample.Alice, false, store.PageRequest{Limit: 5,
				NextToken: sign(postsScope, map[string]types.AttributeValue{"pk": str(store.PostPK("p")), "sk": str(store.SKMetadata),
					"gsi1pk": str(store.AuthorPK(sample.Bob)), "gsi1sk": str(store.PublishedSK("p"))})})
			return err
		},
		"a comment key on User.posts": func(ctx context.Context, _ string) error {
			_, err := s.PostsByAuthor(ctx, sample.Alice, false, store.PageRequest{Limit: 5,
				NextToken: sign(postsScope, map[string]types.AttributeValue{"pk": str(store.PostPK("p")), "sk": str(store.CommentSK("c")),
					"gsi1pk": str(store.AuthorPK(sample.Alice)), "gsi1sk": str(store.CommentSK("c"))})})
			return err
		},
	}
	for name, read := range cases {
		ctx, m := cost.WithMeter(t.Context())
		if err := read(ctx, name); !errs.Is(err, errs.InvalidNextToken) || len(m.Calls()) != 0 {
			t.Errorf("%s: %v after %d DynamoDB calls; want InvalidNextToken and none", name, err, len(m.Calls()))
		}
	}
}
