package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// countsData is sample.Data without likes, with a draft and a post written
// before drafts existed (no status), both by bob.
func countsData() store.Dataset {
	d := sample.Data()
	d.Posts = append(d.Posts,
		store.Post{ID: "01HWZZ0000000000000000DRFT", AuthorID: sample.Bob, Title: "Draft", Body: "d", CreatedAt: "2024-05-02T00:00:00.000Z",
			UpdatedAt: "2024-05-02T00:00:00.000Z", Status: store.StatusDraft},
		store.Post{ID: "01HWZZ0000000000000000OLD0", AuthorID: sample.Bob, Title: "Old", Body: "b", CreatedAt: "2024-05-03T00:00:00.000Z",
			UpdatedAt: "2024-05-03T00:00:00.000Z"})
	d.Users[1].PostCount = 1 // bob's published post
	d.Likes, d.Posts[0].LikeCount = nil, 0
	return d
}

// After every write of a sequence of each kind, refused ones among them,
// every count of the users and posts equals the items it counts.
func TestEveryWriteKeepsCountsEqualToTheirItems(t *testing.T) {
	d := countsData()
	start := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	today, todayClient := storetest.NewStore(t, d, storetest.Deterministic(start)...)

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
		if _, err := step.write(t.Context(), today); err != nil && errs.KindOf(err) == errs.Internal {
			t.Errorf("%s: %v", step.name, err)
		}
		posts := []string{sample.HelloPost, draft, oldPost}
		if created != "" {
			posts = append(posts, created)
		}
		wantCountsOfItems(t, today, todayClient, []string{sample.Alice, sample.Bob, sample.Carol}, posts)
	}
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
