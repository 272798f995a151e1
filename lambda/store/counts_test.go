package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// writeAsBeforeCounters writes d's users and posts by hand as the code
// before counter items wrote them: the counts on the profile's and the
// post's own item (a post without status, as before drafts, when its Status
// is empty), and no counter item. Comments and follows kept their format.
func writeAsBeforeCounters(t *testing.T, c *dynamodb.Client, table string, d store.Dataset) {
	t.Helper()
	s := func(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
	n := func(v int) types.AttributeValue { return &types.AttributeValueMemberN{Value: strconv.Itoa(v)} }
	var items []map[string]types.AttributeValue
	for _, u := range d.Users {
		item := map[string]types.AttributeValue{"pk": s("USER#" + u.ID), "sk": s("#METADATA"), "gsi1pk": s("HANDLE#" + u.Handle), "gsi1sk": s("USER#" + u.ID),
			"id": s(u.ID), "handle": s(u.Handle), "name": s(u.Name), "createdAt": s(u.CreatedAt),
			"postCount": n(u.PostCount), "followerCount": n(u.FollowerCount), "followingCount": n(u.FollowingCount)}
		if u.Email != nil {
			item["email"] = s(*u.Email)
		}
		if u.Bio != nil {
			item["bio"] = s(*u.Bio)
		}
		items = append(items, item, map[string]types.AttributeValue{"pk": s("HANDLE#" + u.Handle), "sk": s("#HANDLE"), "userId": s(u.ID)})
	}
	for _, p := range d.Posts {
		sk := "POST#" + p.ID
		if p.Status == store.StatusDraft {
			sk = "DRAFT#" + p.ID
		}
		item := map[string]types.AttributeValue{"pk": s("POST#" + p.ID), "sk": s("#METADATA"), "gsi1pk": s("USER#" + p.AuthorID), "gsi1sk": s(sk),
			"id": s(p.ID), "authorId": s(p.AuthorID), "title": s(p.Title), "body": s(p.Body), "createdAt": s(p.CreatedAt), "updatedAt": s(p.UpdatedAt),
			"commentCount": n(p.CommentCount)}
		if p.Status != "" {
			item["status"] = s(p.Status)
		}
		items = append(items, item)
	}
	for _, item := range items {
		if _, err := c.PutItem(t.Context(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
}

// legacyData is sample.Data without likes (they came with counters), with a
// draft and a post written before drafts existed (no status), both by bob.
func legacyData() store.Dataset {
	d := sample.Data()
	d.Posts = append(d.Posts,
		store.Post{ID: "01HWZZ0000000000000000DRFT", AuthorID: sample.Bob, Title: "Draft", Body: "d", CreatedAt: "2024-05-02T00:00:00.000Z",
			UpdatedAt: "2024-05-02T00:00:00.000Z", Status: store.StatusDraft},
		store.Post{ID: "01HWZZ0000000000000000OLD0", AuthorID: sample.Bob, Title: "Old", Body: "b", CreatedAt: "2024-05-03T00:00:00.000Z",
			UpdatedAt: "2024-05-03T00:00:00.000Z"})
	d.Users[1].PostCount = 1               // bob's published post
	d.Likes, d.Posts[0].LikeCount = nil, 0 // likes came with counters
	return d
}

// Items written before counters existed are read and counted as items
// written since: the same writes on a table of such items and on one loaded
// as today's code writes read back the same, every count and every answer,
// and each old item is adopted (its counter written) by the first write
// that counts on it, once.
func TestItemsWrittenBeforeCountersCountTheSame(t *testing.T) {
	d := legacyData()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	today, todayClient := storetest.NewStore(t, d, storetest.Deterministic(start)...)
	old, client := storetest.NewStore(t, store.Dataset{Comments: d.Comments, Follows: d.Follows}, storetest.Deterministic(start)...)
	writeAsBeforeCounters(t, client, old.Table(), d)

	draft, oldPost := d.Posts[1].ID, d.Posts[2].ID
	var created string // the ID of the post bob creates
	steps := []struct {
		name  string
		write func(context.Context, *store.Store) (any, error)
	}{
		{"nothing yet", func(context.Context, *store.Store) (any, error) { return nil, nil }},
		{"carol comments on alice's post", func(ctx context.Context, s *store.Store) (any, error) {
			c, err := s.CreateComment(ctx, sample.Carol, sample.HelloPost, "again")
			return c, err
		}},
		{"carol comments on bob's old post", func(ctx context.Context, s *store.Store) (any, error) {
			return s.CreateComment(ctx, sample.Carol, oldPost, "old")
		}},
		{"a comment on the draft is refused", func(ctx context.Context, s *store.Store) (any, error) {
			return s.CreateComment(ctx, sample.Carol, draft, "no")
		}},
		{"carol likes bob's old post", func(ctx context.Context, s *store.Store) (any, error) {
			return s.LikePost(ctx, sample.Carol, oldPost, []string{"id", "likeCount"})
		}},
		{"alice likes it", func(ctx context.Context, s *store.Store) (any, error) {
			return s.LikePost(ctx, sample.Alice, oldPost, nil)
		}},
		{"carol unlikes it", func(ctx context.Context, s *store.Store) (any, error) {
			return s.UnlikePost(ctx, sample.Carol, oldPost, []string{"likeCount", "commentCount"})
		}},
		{"a like of the draft is refused", func(ctx context.Context, s *store.Store) (any, error) {
			return s.LikePost(ctx, sample.Carol, draft, nil)
		}},
		{"carol follows alice", func(ctx context.Context, s *store.Store) (any, error) {
			return s.Follow(ctx, sample.Carol, sample.Alice)
		}},
		{"bob follows alice", func(ctx context.Context, s *store.Store) (any, error) { return s.Follow(ctx, sample.Bob, sample.Alice) }},
		{"alice unfollows bob", func(ctx context.Context, s *store.Store) (any, error) {
			return s.Unfollow(ctx, sample.Alice, sample.Bob)
		}},
		{"bob deletes his comment", func(ctx context.Context, s *store.Store) (any, error) {
			return s.DeleteComment(ctx, sample.Bob, sample.HelloPost, sample.BobComment)
		}},
		{"alice deletes carol's comment on her post", func(ctx context.Context, s *store.Store) (any, error) {
			return s.DeleteComment(ctx, sample.Alice, sample.HelloPost, sample.CarolComment)
		}},
		{"bob publishes his draft", func(ctx context.Context, s *store.Store) (any, error) { return s.PublishPost(ctx, sample.Bob, draft) }},
		{"alice comments on it", func(ctx context.Context, s *store.Store) (any, error) {
			return s.CreateComment(ctx, sample.Alice, draft, "first")
		}},
		{"carol likes it", func(ctx context.Context, s *store.Store) (any, error) {
			return s.LikePost(ctx, sample.Carol, draft, []string{"likeCount"})
		}},
		{"bob creates a post", func(ctx context.Context, s *store.Store) (any, error) {
			p, err := s.CreatePost(ctx, sample.Bob, store.NewPost{Title: "New", Body: "n"})
			created = p.ID
			return p, err
		}},
		{"bob updates his old post", func(ctx context.Context, s *store.Store) (any, error) {
			title := "Old, edited"
			return s.UpdatePost(ctx, sample.Bob, oldPost, store.PostEdit{Title: &title})
		}},
		{"carol updates her profile", func(ctx context.Context, s *store.Store) (any, error) {
			name := "Carol C."
			return s.UpdateUser(ctx, sample.Carol, &name, nil)
		}},
		{"bob deletes his old post", func(ctx context.Context, s *store.Store) (any, error) { return s.DeletePost(ctx, sample.Bob, oldPost) }},
		{"alice deletes her post", func(ctx context.Context, s *store.Store) (any, error) {
			return s.DeletePost(ctx, sample.Alice, sample.HelloPost)
		}},
	}
	for _, step := range steps {
		answers := [2]string{}
		for i, s := range []*store.Store{today, old} {
			v, err := step.write(t.Context(), s)
			answers[i] = fmt.Sprintf("%s %v", encode(t, v), errs.KindOf(err))
		}
		if answers[0] != answers[1] {
			t.Errorf("%s: today's items answer %s, older items %s", step.name, answers[0], answers[1])
		}
		posts := []string{sample.HelloPost, draft, oldPost}
		if created != "" {
			posts = append(posts, created)
		}
		if a, b := readAll(t, today, posts), readAll(t, old, posts); a != b {
			t.Errorf("after %s:\ntoday's items read %s\nolder items read   %s", step.name, a, b)
		}
		users := []string{sample.Alice, sample.Bob, sample.Carol}
		wantCountsOfItems(t, today, todayClient, users, posts)
		wantCountsOfItems(t, old, client, users, posts)
	}
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// readAll reads the users and posts of the sample every way the store reads
// them: by key, by handle, in a batch, listed by author, with their first
// comments or follows.
func readAll(t *testing.T, s *store.Store, posts []string) string {
	t.Helper()
	ctx := t.Context()
	var out []any
	add := func(v any, err error) { out = append(out, v, errs.KindOf(err)) }
	users := []string{sample.Alice, sample.Bob, sample.Carol}
	for _, id := range users {
		add(s.User(ctx, id))
		u, _ := s.User(ctx, id)
		add(s.UserByHandle(ctx, u.Handle))
		u, pre, err := s.UserWithFollowing(ctx, id, 5, 1<<20)
		add([]any{u, pre}, err)
		page, err := s.PostsByAuthor(ctx, id, false, store.PageRequest{Limit: 10})
		add(page.Items, err)
		page, err = s.PostsByAuthor(ctx, id, true, store.PageRequest{Limit: 10})
		add(page.Items, err)
	}
	add(s.Users(ctx, users, true))
	for _, id := range posts {
		add(s.Post(ctx, id))
		p, pre, err := s.PostWithComments(ctx, id, store.PageRequest{Limit: 5}, 1<<20)
		add([]any{p, pre}, err)
		p, pre, err = s.PostWithComments(ctx, id, store.PageRequest{Limit: 5, Order: store.NewestFirst}, 1<<20)
		add([]any{p, pre}, err)
	}
	for _, id := range posts {
		page, err := s.Likes(ctx, id, store.PageRequest{Limit: 10})
		add(page.Items, err)
	}
	add(s.LikedBy(ctx, sample.Carol, posts))
	add(s.Posts(ctx, posts))
	add(s.Posts(ctx, posts, "commentCount", "likeCount"))
	return encode(t, out)
}

// wantCountsOfItems fails unless every count of users and posts equals the
// items it counts.
func wantCountsOfItems(t *testing.T, s *store.Store, c *dynamodb.Client, users, posts []string) {
	t.Helper()
	for _, id := range users {
		u, err := s.User(t.Context(), id)
		want := store.User{PostCount: count(t, c, s.Table(), store.GSI1, "gsi1pk", store.AuthorPK(id), "gsi1sk", store.PostPrefix),
			FollowerCount:  count(t, c, s.Table(), store.GSI2, "gsi2pk", store.FollowersPK(id), "", ""),
			FollowingCount: count(t, c, s.Table(), "", "pk", store.UserPK(id), "sk", store.FollowsPrefix)}
		if err != nil || u.PostCount != want.PostCount || u.FollowerCount != want.FollowerCount || u.FollowingCount != want.FollowingCount {
			t.Errorf("%s: counts %d/%d/%d (%v), items %d/%d/%d", id, u.PostCount, u.FollowerCount, u.FollowingCount, err,
				want.PostCount, want.FollowerCount, want.FollowingCount)
		}
	}
	for _, id := range posts {
		p, err := s.Post(t.Context(), id)
		if errs.Is(err, errs.NotFound) {
			continue
		}
		comments := count(t, c, s.Table(), "", "pk", store.PostPK(id), "sk", store.CommentPrefix)
		likes := count(t, c, s.Table(), "", "pk", store.PostPK(id), "sk", store.LikePrefix)
		if err != nil || p.CommentCount != comments || p.LikeCount != likes {
			t.Errorf("post %s: %d comments, %d likes (%v); items %d, %d", id, p.CommentCount, p.LikeCount, err, comments, likes)
		}
	}
}
