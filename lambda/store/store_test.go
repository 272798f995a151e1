package store_test

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// metered returns a context whose DynamoDB calls are counted.
func metered(t *testing.T) (context.Context, *cost.Meter) {
	t.Helper()
	return cost.WithMeter(t.Context())
}

// wantCalls checks that exactly the listed calls ("Op" or "Op:Index") were made.
func wantCalls(t *testing.T, m *cost.Meter, want ...string) {
	t.Helper()
	var got []string
	for _, c := range m.Calls() {
		s := c.Operation
		if c.Index != "" {
			s += ":" + c.Index
		}
		got = append(got, s)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("DynamoDB calls = %v, want %v", got, want)
	}
}

func TestReadAccessPatterns(t *testing.T) {
	s, _ := storetest.NewStore(t, sample.Data())
	first := store.PageRequest{Limit: store.DefaultLimit}

	t.Run("AP1 user by id is one Query of the profile and its counter", func(t *testing.T) {
		ctx, m := metered(t)
		u, err := s.User(ctx, sample.Alice)
		if err != nil || u.Handle != "alice" || u.PostCount != 1 || u.FollowingCount != 1 {
			t.Fatalf("User = %+v, %v", u, err)
		}
		wantCalls(t, m, "Query")
		if c := m.Calls()[0]; c.Items != 2 || c.Read != 0.5 {
			t.Errorf("read %d items for %v units; want 2 items for 0.5, a GetItem's units", c.Items, c.Read)
		}
	})
	t.Run("AP1 absent user is NotFound", func(t *testing.T) {
		ctx, m := metered(t)
		if _, err := s.User(ctx, "u_nobody"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("err = %v, want NotFound", err)
		}
		wantCalls(t, m, "Query")
	})
	t.Run("AP2 user by handle is one Query on GSI1, counts included", func(t *testing.T) {
		ctx, m := metered(t)
		u, err := s.UserByHandle(ctx, "bob")
		if err != nil || u.ID != sample.Bob || u.FollowerCount != 1 {
			t.Fatalf("UserByHandle = %+v, %v", u, err)
		}
		wantCalls(t, m, "Query:GSI1")
	})
	t.Run("AP3 post is one Query of the post and its counter", func(t *testing.T) {
		ctx, m := metered(t)
		p, err := s.Post(ctx, sample.HelloPost)
		if err != nil || p.Title != "Hello" || p.CommentCount != 2 || p.AuthorID != sample.Alice {
			t.Fatalf("Post = %+v, %v", p, err)
		}
		wantCalls(t, m, "Query")
	})
	t.Run("AP4 posts by author is one Query on GSI1", func(t *testing.T) {
		ctx, m := metered(t)
		titles := first
		titles.Attributes = []string{"id", "title"}
		page, err := s.PostsByAuthor(ctx, sample.Alice, false, titles)
		if err != nil || len(page.Items) != 1 || page.Items[0].ID != sample.HelloPost || page.NextToken != nil {
			t.Fatalf("PostsByAuthor = %+v, %v", page, err)
		}
		wantCalls(t, m, "Query:GSI1")
	})
	t.Run("AP4 with counts selected, then one BatchGetItem of the counters", func(t *testing.T) {
		ctx, m := metered(t)
		page, err := s.PostsByAuthor(ctx, sample.Alice, false, first)
		if err != nil || len(page.Items) != 1 || page.Items[0].CommentCount != 2 {
			t.Fatalf("PostsByAuthor = %+v, %v", page, err)
		}
		wantCalls(t, m, "BatchGetItem", "Query:GSI1")
	})
	t.Run("AP5 comments on post is one Query, oldest first", func(t *testing.T) {
		ctx, m := metered(t)
		page, err := s.CommentsOnPost(ctx, sample.HelloPost, first)
		if err != nil || len(page.Items) != 2 || page.Items[0].ID != sample.BobComment || page.Items[1].ID != sample.CarolComment {
			t.Fatalf("CommentsOnPost = %+v, %v", page, err)
		}
		wantCalls(t, m, "Query")
	})
	t.Run("AP6 comments by author is one Query on GSI1", func(t *testing.T) {
		ctx, m := metered(t)
		page, err := s.CommentsByAuthor(ctx, sample.Carol, first)
		if err != nil || len(page.Items) != 1 || page.Items[0].Body != "Welcome!" {
			t.Fatalf("CommentsByAuthor = %+v, %v", page, err)
		}
		wantCalls(t, m, "Query:GSI1")
	})
	t.Run("AP7 following is one Query", func(t *testing.T) {
		ctx, m := metered(t)
		page, err := s.Following(ctx, sample.Alice, first)
		if err != nil || len(page.Items) != 1 || page.Items[0].FollowedID != sample.Bob {
			t.Fatalf("Following = %+v, %v", page, err)
		}
		wantCalls(t, m, "Query")
	})
	t.Run("AP8 followers is one Query on GSI2", func(t *testing.T) {
		ctx, m := metered(t)
		page, err := s.Followers(ctx, sample.Bob, first)
		if err != nil || len(page.Items) != 1 || page.Items[0].FollowerID != sample.Alice {
			t.Fatalf("Followers = %+v, %v", page, err)
		}
		wantCalls(t, m, "Query:GSI2")
	})
	t.Run("AP9 users is one BatchGetItem of distinct keys", func(t *testing.T) {
		ctx, m := metered(t)
		users, err := s.Users(ctx, []string{sample.Bob, sample.Alice, sample.Bob, "u_nobody", sample.Carol}, true)
		if err != nil || len(users) != 3 || users[sample.Carol].Name != "Carol" {
			t.Fatalf("Users = %+v, %v", users, err)
		}
		wantCalls(t, m, "BatchGetItem")
		if keys := m.Calls()[0].Keys; keys != 8 {
			t.Errorf("BatchGetItem asked for %d keys, want 8 (duplicates removed, a counter for each)", keys)
		}
		if users[sample.Alice].PostCount != 1 || users[sample.Bob].FollowerCount != 1 {
			t.Errorf("counts: %+v", users)
		}
	})
	t.Run("AP9 without counts, one key a user", func(t *testing.T) {
		ctx, m := metered(t)
		users, err := s.Users(ctx, []string{sample.Bob, sample.Alice, sample.Bob, "u_nobody", sample.Carol}, false)
		if err != nil || len(users) != 3 || users[sample.Alice].PostCount != 0 {
			t.Fatalf("Users = %+v, %v", users, err)
		}
		if keys := m.Calls()[0].Keys; keys != 4 {
			t.Errorf("BatchGetItem asked for %d keys, want 4", keys)
		}
	})
	t.Run("AP10 posts is one BatchGetItem", func(t *testing.T) {
		ctx, m := metered(t)
		posts, err := s.Posts(ctx, []string{sample.HelloPost, "01HWNOPE000000000000000000"})
		if err != nil || len(posts) != 1 || posts[sample.HelloPost].Title != "Hello" {
			t.Fatalf("Posts = %+v, %v", posts, err)
		}
		wantCalls(t, m, "BatchGetItem")
	})
	t.Run("capacity is reported", func(t *testing.T) {
		ctx, m := metered(t)
		if _, err := s.User(ctx, sample.Alice); err != nil {
			t.Fatal(err)
		}
		if got := m.Summary().Read; got != 0.5 {
			t.Errorf("an eventually consistent GetItem of a small item = %v RCU, want 0.5", got)
		}
	})
}

func TestInvalidIDsNeverReachDynamoDB(t *testing.T) {
	s, _ := storetest.NewStore(t, store.Dataset{})
	ctx, m := metered(t)
	page := store.PageRequest{Limit: 1}
	calls := map[string]func() error{
		"User":             func() error { _, err := s.User(ctx, "x#METADATA"); return err },
		"Post":             func() error { _, err := s.Post(ctx, "POST#1"); return err },
		"Users":            func() error { _, err := s.Users(ctx, []string{"ok", "a#b"}, true); return err },
		"Posts":            func() error { _, err := s.Posts(ctx, []string{""}); return err },
		"UserByHandle":     func() error { _, err := s.UserByHandle(ctx, "Al#ce"); return err },
		"PostsByAuthor":    func() error { _, err := s.PostsByAuthor(ctx, "a b", false, page); return err },
		"CommentsOnPost":   func() error { _, err := s.CommentsOnPost(ctx, "a#", page); return err },
		"CommentsByAuthor": func() error { _, err := s.CommentsByAuthor(ctx, "#", page); return err },
		"Following":        func() error { _, err := s.Following(ctx, "u#1", page); return err },
		"Followers":        func() error { _, err := s.Followers(ctx, "u#1", page); return err },
	}
	for name, call := range calls {
		if err := call(); !errs.Is(err, errs.Validation) {
			t.Errorf("%s: err = %v, want ValidationError", name, err)
		}
	}
	if n := m.Total(); n != 0 {
		t.Errorf("%d DynamoDB calls were made with invalid IDs, want 0", n)
	}
}

// manyUsers returns n users with IDs u000..u<n-1>.
func manyUsers(n int) []store.User {
	users := make([]store.User, n)
	for i := range users {
		users[i] = store.User{ID: fmt.Sprintf("u%03d", i), Handle: fmt.Sprintf("user%03d", i), Name: fmt.Sprint("User ", i), CreatedAt: "2024-05-01T00:00:00.000Z"}
	}
	return users
}

func TestBatchGetChunksBy100(t *testing.T) {
	users := manyUsers(250)
	s, _ := storetest.NewStore(t, store.Dataset{Users: users})
	ids := make([]string, 0, 300)
	for _, u := range users {
		ids = append(ids, u.ID)
	}
	ids = append(ids, ids[:50]...) // duplicates are read once
	ctx, m := metered(t)
	got, err := s.Users(ctx, ids, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 250 {
		t.Errorf("got %d users, want 250", len(got))
	}
	if n := m.Count("BatchGetItem"); n != 3 || m.Total() != 3 {
		t.Errorf("calls = %+v, want 3 BatchGetItem", m.Calls())
	}
	var keys []int
	for _, c := range m.Calls() {
		keys = append(keys, c.Keys)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, []int{50, 100, 100}) {
		t.Errorf("keys per request = %v, want [50 100 100]", keys)
	}
}

func TestPagination(t *testing.T) {
	d := sample.Data()
	const extra = 5
	for i := range extra {
		d.Comments = append(d.Comments, store.Comment{ID: fmt.Sprintf("01HWN00000000000000000000%d", i), PostID: sample.HelloPost,
			AuthorID: sample.Bob, Body: fmt.Sprint("more ", i), CreatedAt: "2024-04-30T00:00:00.000Z"})
	}
	s, _ := storetest.NewStore(t, d)
	ctx := t.Context()

	var seen []string
	req := store.PageRequest{Limit: 2}
	for pages := 1; ; pages++ {
		page, err := s.CommentsOnPost(ctx, sample.HelloPost, req)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range page.Items {
			seen = append(seen, c.ID)
		}
		if page.NextToken == nil {
			if pages != 4 || len(page.Items) != 1 {
				t.Errorf("last page is page %d with %d items, want page 4 with 1", pages, len(page.Items))
			}
			break
		}
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		req.NextToken = *page.NextToken
	}
	if len(seen) != 2+extra || !slices.IsSorted(seen) {
		t.Errorf("paged comments = %v, want all %d in order, each once", seen, 2+extra)
	}

	// An exactly full last page has no nextToken.
	page, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 2 + extra})
	if err != nil || page.NextToken != nil || len(page.Items) != 2+extra {
		t.Errorf("full page: %d items, nextToken %v, err %v", len(page.Items), page.NextToken, err)
	}

	first, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 1})
	if err != nil || first.NextToken == nil {
		t.Fatalf("first page: %+v, %v", first, err)
	}
	token := *first.NextToken
	tampered := []byte(token)
	tampered[3] ^= 1
	bad := map[string]func() error{
		"tampered": func() error {
			_, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 1, NextToken: string(tampered)})
			return err
		},
		"garbage": func() error {
			_, err := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 1, NextToken: "not-a-token"})
			return err
		},
		"other parent": func() error {
			_, err := s.CommentsOnPost(ctx, "01HWOTHERPOST0000000000000", store.PageRequest{Limit: 1, NextToken: token})
			return err
		},
		"other query": func() error {
			_, err := s.CommentsByAuthor(ctx, sample.HelloPost, store.PageRequest{Limit: 1, NextToken: token})
			return err
		},
	}
	for name, call := range bad {
		if err := call(); !errs.Is(err, errs.InvalidNextToken) {
			t.Errorf("%s token: err = %v, want InvalidNextToken", name, err)
		}
	}
}

// DynamoDB out of reach is one kind whatever the request: a read and a write
// both answer Throttled ("retry later"), never a read InternalError beside a
// write Throttled.
func TestAnOutageIsOneKindForReadsAndWrites(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there now: every connection is refused
	s := store.New(ddblocal.Client(closed), "gone", cursor.New(storetest.TokenKey))
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, readErr := s.Post(ctx, sample.HelloPost)
	_, queryErr := s.CommentsOnPost(ctx, sample.HelloPost, store.PageRequest{Limit: 5})
	_, batchErr := s.Users(ctx, []string{sample.Alice, sample.Bob}, true)
	_, writeErr := s.CreateComment(ctx, sample.Bob, sample.HelloPost, "hi")
	for name, err := range map[string]error{"GetItem": readErr, "Query": queryErr, "BatchGetItem": batchErr, "TransactWriteItems": writeErr} {
		if !errs.Is(err, errs.Throttled) {
			t.Errorf("%s with DynamoDB out of reach: %v (%s), want Throttled", name, err, errs.KindOf(err))
		}
	}
}
