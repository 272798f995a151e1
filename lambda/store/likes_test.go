package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// wantLikes fails unless the post's likeCount, its likes and their guards
// all count n.
func wantLikes(t *testing.T, s *store.Store, c *dynamodb.Client, postID string, likers []string, n int) {
	t.Helper()
	p, err := s.Post(t.Context(), postID)
	likes := count(t, c, s.Table(), "", "pk", store.PostPK(postID), "sk", store.LikePrefix)
	guards := 0
	for _, u := range likers {
		if m, err := s.LikedBy(t.Context(), u, []string{postID}); err != nil {
			t.Fatal(err)
		} else if m[postID] {
			guards++
		}
	}
	if err != nil || p.LikeCount != n || likes != n || guards != n {
		t.Errorf("likeCount %d (%v), %d likes, %d guards; want %d of each", p.LikeCount, err, likes, guards, n)
	}
}

func TestLikes(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	ctx := t.Context()
	all := []string{sample.Alice, sample.Bob, sample.Carol}

	p, err := s.LikePost(ctx, sample.Bob, sample.HelloPost, nil)
	if err != nil || p.LikeCount != 1 || p.Title != "Hello" || p.CommentCount != 2 {
		t.Fatalf("bob likes: %+v, %v", p, err)
	}
	if p, err = s.LikePost(ctx, sample.Bob, sample.HelloPost, nil); err != nil || p.LikeCount != 1 {
		t.Errorf("bob likes again: %+v, %v; want no change", p, err)
	}
	if p, err = s.LikePost(ctx, sample.Carol, sample.HelloPost, []string{"id", "likeCount"}); err != nil || p.LikeCount != 2 {
		t.Errorf("carol likes: %+v, %v", p, err)
	}
	if b, _ := p.MarshalJSON(); string(b) != `{"id":"`+sample.HelloPost+`","authorId":"u_alice","commentCount":2,"likeCount":2,"status":"PUBLISHED"}` {
		t.Errorf("answered from the counter alone: %s", b)
	}
	wantLikes(t, s, c, sample.HelloPost, all, 2)

	page, err := s.Likes(ctx, sample.HelloPost, store.PageRequest{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Items[0].UserID != sample.Carol || page.NextToken == nil {
		t.Fatalf("first page of likes: %+v, %v; want carol's, newest first", page, err)
	}
	page, err = s.Likes(ctx, sample.HelloPost, store.PageRequest{Limit: 1, NextToken: *page.NextToken})
	if err != nil || len(page.Items) != 1 || page.Items[0].UserID != sample.Bob {
		t.Fatalf("second page of likes: %+v, %v", page, err)
	}
	liked, err := s.LikedBy(ctx, sample.Bob, []string{sample.HelloPost, "01HWNOPE000000000000000000"})
	if err != nil || !liked[sample.HelloPost] || len(liked) != 1 {
		t.Errorf("bob's likes: %v, %v", liked, err)
	}

	if p, err = s.UnlikePost(ctx, sample.Bob, sample.HelloPost, nil); err != nil || p.LikeCount != 1 {
		t.Errorf("bob unlikes: %+v, %v", p, err)
	}
	if p, err = s.UnlikePost(ctx, sample.Bob, sample.HelloPost, nil); err != nil || p.LikeCount != 1 {
		t.Errorf("bob unlikes again: %+v, %v; want no change", p, err)
	}
	wantLikes(t, s, c, sample.HelloPost, all, 1)

	draft, err := s.CreatePost(ctx, sample.Bob, store.NewPost{Title: "Draft", Body: "d", Draft: true})
	if err != nil {
		t.Fatal(err)
	}
	refusals := map[string]error{}
	_, refusals["a draft"] = s.LikePost(ctx, sample.Carol, draft.ID, nil)
	_, refusals["its author, a draft"] = s.LikePost(ctx, sample.Bob, draft.ID, nil)
	_, refusals["an absent post"] = s.LikePost(ctx, sample.Carol, "01HWNOPE000000000000000000", nil)
	_, refusals["without a profile"] = s.LikePost(ctx, "u_nobody", sample.HelloPost, nil)
	_, refusals["unlike an absent post"] = s.UnlikePost(ctx, sample.Carol, "01HWNOPE000000000000000000", nil)
	_, refusals["unlike someone else's draft"] = s.UnlikePost(ctx, sample.Carol, draft.ID, nil)
	for what, err := range refusals {
		if !errs.Is(err, errs.NotFound) {
			t.Errorf("%s: %v, want NotFound", what, err)
		}
	}
	wantLikes(t, s, c, sample.HelloPost, append(all, "u_nobody"), 1)
	wantLikes(t, s, c, draft.ID, all, 0)
	if _, err := s.LikePost(ctx, "a#b", sample.HelloPost, nil); !errs.Is(err, errs.Validation) {
		t.Errorf("an invalid ID: %v", err)
	}

	// Deleting the post sweeps its likes and their guards.
	if _, err := s.DeletePost(ctx, sample.Alice, sample.HelloPost); err != nil {
		t.Fatal(err)
	}
	if n := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", ""); n != 0 {
		t.Errorf("%d items left in the deleted post's partition", n)
	}
	if liked, _ := s.LikedBy(ctx, sample.Carol, []string{sample.HelloPost}); liked[sample.HelloPost] {
		t.Error("carol's guard of a deleted post's like is left")
	}
}

// 200 concurrent likes and unlikes by 100 users on one post, a third of
// the transactions cancelled for TransactionConflict, leave likeCount equal
// to its likes, and no caller's write fails.
func TestConcurrentLikesKeepCountExact(t *testing.T) {
	for _, rate := range []float64{0, 0.3} {
		t.Run(fmt.Sprintf("conflicts %.0f%%", rate*100), func(t *testing.T) {
			d := sample.Data()
			users := storetest.AddLikers(&d, 100)
			for i, id := range users {
				if i%2 == 0 { // half of them liked it before
					d.Likes = append(d.Likes, store.Like{ID: fmt.Sprintf("01HWN00000000000000000L%03d", i), PostID: sample.HelloPost, UserID: id,
						LikedAt: "2024-05-01T00:00:00.000Z"})
				}
			}
			d.Posts[0].LikeCount = len(d.Likes)
			seeded, c := storetest.NewStore(t, d)
			conflicts := &storetest.Conflicts{API: c, Rate: rate, Seed: 7}
			s := storetest.New(conflicts, seeded.Table())
			// Each user likes and unlikes once, at the same time: whichever
			// lands last decides, and the count must follow the items.
			results := storetest.AtOnce(200, func(i int) error {
				ctx, cancel := context.WithTimeout(context.Background(), resolver.FunctionTimeout)
				defer cancel()
				var err error
				if i < 100 {
					_, err = s.LikePost(ctx, users[i], sample.HelloPost, []string{"likeCount"})
				} else {
					_, err = s.UnlikePost(ctx, users[i-100], sample.HelloPost, []string{"likeCount"})
				}
				return err
			})
			failed := storetest.Failures(t, results)
			likes := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.LikePrefix)
			wantLikes(t, s, c, sample.HelloPost, append(users, sample.Bob), likes) // bob's like is the sample's
			t.Logf("200 writes, %d failed; %d likes left; %d transactions sent, %d cancelled for TransactionConflict", failed, likes, conflicts.Calls, conflicts.Cancelled)
		})
	}
}
