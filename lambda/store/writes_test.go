package store_test

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// raw reads one item as DynamoDB stores it (strongly consistent).
func raw(t *testing.T, c *dynamodb.Client, table, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := c.GetItem(t.Context(), &dynamodb.GetItemInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: pk}, "sk": &types.AttributeValueMemberS{Value: sk}}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// count returns how many items match a key condition, on the table or an index.
func count(t *testing.T, c *dynamodb.Client, table, index, pkAttr, pk, skAttr, prefix string) int {
	t.Helper()
	return storetest.Count(t, c, table, index, pkAttr, pk, skAttr, prefix)
}

func numberAttr(t *testing.T, item map[string]types.AttributeValue, name string) string {
	t.Helper()
	v, ok := item[name].(*types.AttributeValueMemberN)
	if !ok {
		t.Fatalf("%s is %T, not a number", name, item[name])
	}
	return v.Value
}

func TestConcurrentCreateUserSameHandle(t *testing.T) {
	s, c := storetest.NewStore(t, store.Dataset{})
	results := storetest.AtOnce(20, func(i int) error {
		_, err := s.CreateUser(context.Background(), store.User{ID: fmt.Sprintf("caller%02d", i), Handle: "dana", Name: "Dana"})
		return err
	})
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
		case !errs.Is(err, errs.Conflict):
			t.Errorf("caller %d: %v, want Conflict", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d callers got the handle, want exactly 1", won)
	}
	if guard := raw(t, c, s.Table(), store.HandlePK("dana"), store.SKHandle); guard == nil {
		t.Error("no guard item for the handle")
	}
	if n := count(t, c, s.Table(), "", "pk", store.HandlePK("dana"), "sk", ""); n != 1 {
		t.Errorf("%d guard items, want 1", n)
	}
	if n := count(t, c, s.Table(), store.GSI1, "gsi1pk", store.HandlePK("dana"), "gsi1sk", "USER#"); n != 1 {
		t.Errorf("%d users with the handle, want 1", n)
	}
	// The same caller cannot make a second profile, even with a free handle.
	var winner string
	for i, err := range results {
		if err == nil {
			winner = fmt.Sprintf("caller%02d", i)
		}
	}
	if _, err := s.CreateUser(t.Context(), store.User{ID: winner, Handle: "dana2", Name: "Dana"}); !errs.Is(err, errs.Conflict) {
		t.Errorf("second profile: %v, want Conflict", err)
	}
	if raw(t, c, s.Table(), store.HandlePK("dana2"), store.SKHandle) != nil {
		t.Error("a refused createUser left its handle guard behind")
	}
}

// 100 comments created and 40 deleted at once on one post keep its count
// exact, and none of the writes fails: on DynamoDB Local, and with three in
// ten transactions cancelled for TransactionConflict, as DynamoDB cancels a
// transaction that touches an item another one is changing (each write with
// the function's time, as in Lambda).
func TestConcurrentCommentsKeepCountExact(t *testing.T) {
	for _, rate := range []float64{0, 0.3} {
		t.Run(fmt.Sprintf("conflicts %.0f%%", rate*100), func(t *testing.T) {
			d := sample.Data()
			d.Comments = nil
			const seeded, creates = 40, 100
			for i := range seeded {
				d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HWN0000000000000000000%02d", i), PostID: sample.HelloPost,
					AuthorID: sample.Bob, Body: "seeded", CreatedAt: "2024-04-30T00:00:00.000Z"})
			}
			d.Posts[0].CommentCount = seeded
			seededStore, c := storetest.NewStore(t, d)
			conflicts := &storetest.Conflicts{API: c, Rate: rate, Seed: 21}
			s := store.New(conflicts, seededStore.Table(), cursor.New(storetest.TokenKey))
			results := storetest.AtOnce(creates+seeded, func(i int) error {
				ctx, cancel := context.WithTimeout(context.Background(), resolver.FunctionTimeout)
				defer cancel()
				if i < creates {
					_, err := s.CreateComment(ctx, sample.Carol, sample.HelloPost, fmt.Sprint("comment ", i))
					return err
				}
				_, err := s.DeleteComment(ctx, sample.Bob, sample.HelloPost, d.Comments[i-creates].ID)
				return err
			})
			failed := storetest.Failures(t, results)
			items := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
			got := numberAttr(t, raw(t, c, s.Table(), store.PostPK(sample.HelloPost), store.SKCount), "commentCount")
			if items != creates || got != fmt.Sprint(items) {
				t.Errorf("commentCount = %s, comment items = %d, want both %d", got, items, creates)
			}
			t.Logf("%d writes, %d failed; %d transactions sent, %d cancelled for TransactionConflict", creates+seeded, failed, conflicts.Calls, conflicts.Cancelled)
		})
	}
}

func TestConcurrentFollowIsIdempotent(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	counts := func() (string, string) {
		return numberAttr(t, raw(t, c, s.Table(), store.UserPK(sample.Carol), store.SKCount), "followingCount"),
			numberAttr(t, raw(t, c, s.Table(), store.UserPK(sample.Bob), store.SKCount), "followerCount")
	}
	for i, err := range storetest.AtOnce(50, func(int) error { _, err := s.Follow(context.Background(), sample.Carol, sample.Bob); return err }) {
		if err != nil {
			t.Errorf("follow %d: %v", i, err)
		}
	}
	if following, followers := counts(); following != "1" || followers != "2" { // bob already has alice
		t.Errorf("after 50 follows: carol follows %s, bob has %s followers; want 1 and 2", following, followers)
	}
	for i, err := range storetest.AtOnce(50, func(int) error { _, err := s.Unfollow(context.Background(), sample.Carol, sample.Bob); return err }) {
		if err != nil {
			t.Errorf("unfollow %d: %v", i, err)
		}
	}
	if following, followers := counts(); following != "0" || followers != "1" {
		t.Errorf("after 50 unfollows: carol follows %s, bob has %s followers; want 0 and 1", following, followers)
	}
	if f, err := s.Unfollow(t.Context(), sample.Carol, sample.Bob); f != nil || err != nil {
		t.Errorf("unfollow with nothing to undo = %v, %v; want nil, nil", f, err)
	}
}

func TestFollowRefusals(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	if _, err := s.Follow(t.Context(), sample.Bob, sample.Bob); !errs.Is(err, errs.Validation) {
		t.Errorf("self-follow: %v, want ValidationError", err)
	}
	if _, err := s.Follow(t.Context(), sample.Bob, "u_nobody"); !errs.Is(err, errs.NotFound) {
		t.Errorf("unknown user: %v, want NotFound", err)
	}
	if raw(t, c, s.Table(), store.UserPK(sample.Bob), store.FollowsSK("u_nobody")) != nil {
		t.Error("a refused follow was written")
	}
	if got := numberAttr(t, raw(t, c, s.Table(), store.UserPK(sample.Bob), store.SKCount), "followingCount"); got != "0" {
		t.Errorf("bob's followingCount = %s after a refused follow, want 0", got)
	}
}

func TestOnlyOwnersChangePostsAndComments(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	table := s.Table()
	keys := [][2]string{
		{store.PostPK(sample.HelloPost), store.SKMetadata},
		{store.PostPK(sample.HelloPost), store.SKCount},
		{store.PostPK(sample.HelloPost), store.CommentSK(sample.BobComment)},
		{store.UserPK(sample.Alice), store.SKMetadata},
		{store.UserPK(sample.Alice), store.SKCount},
	}
	before := make([]map[string]types.AttributeValue, len(keys))
	for i, k := range keys {
		before[i] = raw(t, c, table, k[0], k[1])
	}
	title := "Hijacked"
	ctx := t.Context()
	refused := map[string]error{}
	_, refused["carol updates alice's post"] = s.UpdatePost(ctx, sample.Carol, sample.HelloPost, store.PostEdit{Title: &title})
	_, refused["carol deletes alice's post"] = s.DeletePost(ctx, sample.Carol, sample.HelloPost)
	_, refused["carol deletes bob's comment"] = s.DeleteComment(ctx, sample.Carol, sample.HelloPost, sample.BobComment)
	for name, err := range refused {
		if !errs.Is(err, errs.Unauthorized) {
			t.Errorf("%s: %v, want Unauthorized", name, err)
		}
	}
	for i, k := range keys {
		if after := raw(t, c, table, k[0], k[1]); !reflect.DeepEqual(before[i], after) {
			t.Errorf("item %v changed by a refused write:\nbefore %v\nafter  %v", k, before[i], after)
		}
	}
	// The post's author may delete someone else's comment on it.
	if _, err := s.DeleteComment(ctx, sample.Alice, sample.HelloPost, sample.BobComment); err != nil {
		t.Errorf("post author deleting a comment: %v", err)
	}
	if _, err := s.DeleteComment(ctx, sample.Alice, sample.HelloPost, sample.BobComment); !errs.Is(err, errs.NotFound) {
		t.Errorf("deleting it again: %v, want NotFound", err)
	}
	p, err := s.UpdatePost(ctx, sample.Alice, sample.HelloPost, store.PostEdit{Title: &title})
	if err != nil || p.Title != title || p.CommentCount != 1 || p.Body == "" {
		t.Errorf("author's update = %+v, %v", p, err)
	}
	if _, err := s.UpdatePost(ctx, sample.Alice, "01HWNOPE", store.PostEdit{Title: &title}); !errs.Is(err, errs.NotFound) {
		t.Errorf("update of a missing post: %v, want NotFound", err)
	}
}

func TestCreateCommentOnMissingPostWritesNothing(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	if _, err := s.CreateComment(t.Context(), sample.Bob, "01HWMISSING", "hello?"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
	if n := count(t, c, s.Table(), "", "pk", store.PostPK("01HWMISSING"), "sk", ""); n != 0 {
		t.Errorf("%d items written for a missing post", n)
	}
}

func TestCreateCommentWithoutProfileWritesNothing(t *testing.T) {
	s, c := storetest.NewStore(t, sample.Data())
	if _, err := s.CreateComment(t.Context(), "u_noprofile", sample.HelloPost, "hello"); !errs.Is(err, errs.NotFound) {
		t.Fatalf("err = %v, want NotFound", err)
	}
	p, err := s.Post(t.Context(), sample.HelloPost)
	if n := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", "COMMENT#"); err != nil || n != 2 || p.CommentCount != 2 {
		t.Errorf("after a refused comment: %d comments, commentCount %d (%v); want 2 and 2", n, p.CommentCount, err)
	}
}

func TestDeletePostRemovesItsComments(t *testing.T) {
	d := sample.Data()
	const comments = 250
	commenters := []string{sample.Bob, sample.Carol}
	for i := range comments {
		d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HWN000000000000000000%03d", i), PostID: sample.HelloPost,
			AuthorID: commenters[i%2], Body: "x", CreatedAt: "2024-04-30T00:00:00.000Z"})
	}
	d.Posts[0].CommentCount = comments + 2
	s, c := storetest.NewStore(t, d)
	p, err := s.DeletePost(t.Context(), sample.Alice, sample.HelloPost)
	if err != nil || p.ID != sample.HelloPost || p.Title != "Hello" {
		t.Fatalf("DeletePost = %+v, %v", p, err)
	}
	if n := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", ""); n != 0 {
		t.Errorf("%d items left in the post's partition", n)
	}
	for _, who := range commenters {
		if n := count(t, c, s.Table(), store.GSI1, "gsi1pk", store.AuthorPK(who), "gsi1sk", store.CommentPrefix); n != 0 {
			t.Errorf("%d of %s's comments left in GSI1", n, who)
		}
	}
	if got := numberAttr(t, raw(t, c, s.Table(), store.UserPK(sample.Alice), store.SKCount), "postCount"); got != "0" {
		t.Errorf("alice's postCount = %s, want 0", got)
	}
	if _, err := s.DeletePost(t.Context(), sample.Alice, sample.HelloPost); !errs.Is(err, errs.NotFound) {
		t.Errorf("second delete: %v, want NotFound", err)
	}
}

// postWithManyComments is the sample data with n comments on the hello post.
func postWithManyComments(n int) store.Dataset {
	d := sample.Data()
	for i := range n {
		d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HZ%022d", i), PostID: sample.HelloPost,
			AuthorID: sample.Carol, Body: "c", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	d.Posts[0].CommentCount += n
	return d
}

func TestDeletePostSweepsConcurrently(t *testing.T) {
	seeded, c := storetest.NewStore(t, postWithManyComments(696)) // 698 comments, and a like with its guard: 700 deletes
	slow := &storetest.SlowWrites{API: c, Delay: 10 * time.Millisecond}
	s := store.New(slow, seeded.Table(), cursor.New(storetest.TokenKey))
	if _, err := s.DeletePost(t.Context(), sample.Alice, sample.HelloPost); err != nil {
		t.Fatal(err)
	}
	if n := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", ""); n != 0 || slow.Calls != 28 || slow.MaxInFlight < 2 {
		t.Errorf("%d items left; %d BatchWriteItem calls (want 28), at most %d at once (want several)", n, slow.Calls, slow.MaxInFlight)
	}
}

func TestDeletePostStopsBeforeTheDeadlineAndARetryFinishes(t *testing.T) {
	seeded, c := storetest.NewStore(t, postWithManyComments(3000))
	slow := &storetest.SlowWrites{API: c, Delay: 100 * time.Millisecond}
	s := store.New(slow, seeded.Table(), cursor.New(storetest.TokenKey))
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	deadline, _ := ctx.Deadline()
	start := time.Now()
	p, err := s.DeletePost(ctx, sample.Alice, sample.HelloPost)
	took := time.Since(start)
	if !errors.Is(err, store.ErrSweepUnfinished) || p.ID != sample.HelloPost {
		t.Fatalf("a sweep longer than the deadline: %+v, %v after %v; want the deleted post and ErrSweepUnfinished", p, err, took)
	}
	// What the store decides is when it stops starting writes; how long the
	// writes it started take is DynamoDB's (Local's, on a loaded machine:
	// one ran 2 ms past the deadline in CI, cancelled by the context).
	if left := deadline.Sub(slow.LastStart); left < slow.Delay {
		t.Errorf("the last BatchWriteItem started %v before the deadline; want at least the %v it takes", left, slow.Delay)
	}
	left := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
	if left == 0 || left == 3002 {
		t.Fatalf("%d comments left; want some deleted and some left", left)
	}
	if _, err := seeded.DeletePost(t.Context(), "u_someone_else", sample.HelloPost); !errs.Is(err, errs.NotFound) {
		t.Errorf("retry: %v, want NotFound (the post is gone)", err)
	}
	if n := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", ""); n != 0 {
		t.Errorf("%d items left after the retry", n)
	}
	if got := numberAttr(t, raw(t, c, s.Table(), store.UserPK(sample.Alice), store.SKCount), "postCount"); got != "0" {
		t.Errorf("alice's postCount = %s, want 0", got)
	}
	t.Logf("%d of 3,002 comments left when the first call stopped, after %v", left, took)
}

func TestCreateAndUpdateUser(t *testing.T) {
	s, _ := storetest.NewStore(t, store.Dataset{})
	email := "erin@example.com"
	u, err := s.CreateUser(t.Context(), store.User{ID: "u_erin", Handle: "erin", Name: "Erin", Email: &email})
	if err != nil || u.CreatedAt == "" {
		t.Fatalf("CreateUser = %+v, %v", u, err)
	}
	bio, name := "Hi", "Erin E."
	u, err = s.UpdateUser(t.Context(), "u_erin", &name, &bio)
	if err != nil || u.Name != name || u.Bio == nil || *u.Bio != bio || u.Handle != "erin" {
		t.Fatalf("UpdateUser = %+v, %v", u, err)
	}
	empty := ""
	if u, err = s.UpdateUser(t.Context(), "u_erin", nil, &empty); err != nil || u.Bio != nil {
		t.Errorf("clearing the bio = %+v, %v", u, err)
	}
	if _, err := s.UpdateUser(t.Context(), "u_nobody", &name, nil); !errs.Is(err, errs.NotFound) {
		t.Errorf("update without a profile: %v, want NotFound", err)
	}
	p, err := s.CreatePost(t.Context(), "u_erin", store.NewPost{Title: "T", Body: "B"})
	if err != nil || !store.ValidID(p.ID) || len(p.ID) != 26 {
		t.Errorf("CreatePost = %+v, %v (want a ULID id)", p, err)
	}
	if got, _ := s.User(t.Context(), "u_erin"); got.PostCount != 1 {
		t.Errorf("postCount = %d after a post, want 1", got.PostCount)
	}
	if _, err := s.CreatePost(t.Context(), "u_nobody", store.NewPost{Title: "T", Body: "B"}); !errs.Is(err, errs.NotFound) {
		t.Errorf("post without a profile: %v, want NotFound", err)
	}
}
