package executor_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
)

// likedByMe is right for the liker, for another user and for an API key,
// and a page of 20 posts reads it with one request, in the invocation that
// lists them (answered early, as the other fields).
func TestLikedByMeForAPageOfPostsIsOneRequest(t *testing.T) {
	d := sample.Blog(20, 1, 5)
	js, _ := setup(t, d, resolver.CoreRoutes)
	direct, _ := setupDirect(t, d, resolver.CoreRoutes)
	var liked []string
	for i, p := range d.Posts[1:] { // the sample's hello post, then alice's 20
		if i%2 == 0 {
			like := executor.Request{Query: `mutation { likePost(postId: "` + p.ID + `") { id likeCount likedByMe } }`, Identity: signedIn(sample.Carol)}
			data, _, _ := sameAnswer(t, js, direct, like) // each layout has its own table
			if get(data, "likePost", "likedByMe") != true {
				t.Fatalf("likePost answers %v", data)
			}
			liked = append(liked, p.ID)
		}
	}
	q := `{ user(handle: "alice") { posts(limit: 20) { items { id likeCount likedByMe } } } }`
	requests := map[string]int{}
	for name, caller := range map[string]*executor.Request{
		"carol, the liker": {Identity: signedIn(sample.Carol)}, "bob": {Identity: signedIn(sample.Bob)}, "an API key": {},
	} {
		caller.Query = q
		data, cost, _ := sameAnswer(t, js, direct, *caller)
		items := get(data, "user", "posts", "items").([]any)
		if len(items) != 20 {
			t.Fatalf("%s: %d posts", name, len(items))
		}
		for _, it := range items {
			p := it.(map[string]any)
			want := name == "carol, the liker" && slices.Contains(liked, p["id"].(string))
			if p["likedByMe"] != want {
				t.Errorf("%s: post %s likedByMe %v, want %v", name, p["id"], p["likedByMe"], want)
			}
		}
		if cost.LambdaInvocations != 1 {
			t.Errorf("%s: %d invocations, want 1", name, cost.LambdaInvocations)
		}
		requests[name] = cost.DynamoDB["BatchGetItem"]
	}
	// The page's counters (likeCount) are one BatchGetItem for everyone; the
	// caller's likes one more, for a signed-in caller only.
	if requests["an API key"] != 1 || requests["bob"] != 2 || requests["carol, the liker"] != 2 {
		t.Errorf("BatchGetItem requests by caller: %v; want 1 for an API key, 2 for a user", requests)
	}
}

// 200 concurrent likes and unlikes by 100 users on one post, through the
// API, leave likeCount equal to its likes as Post.likes lists them, and
// every mutation answers.
func TestConcurrentLikesThroughTheAPI(t *testing.T) {
	d := sample.Data()
	var users []string
	for i := range 100 {
		id := fmt.Sprintf("u_fan%03d", i)
		users = append(users, id)
		d.Users = append(d.Users, store.User{ID: id, Handle: fmt.Sprintf("fan%03d", i), Name: id, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	js, _ := setup(t, d, resolver.CoreRoutes)
	var wg sync.WaitGroup
	errors := make([][]executor.Error, 200)
	for i := range 200 {
		wg.Go(func() {
			op := "likePost"
			if i%4 == 3 { // a quarter of them undone, at the same time
				op = "unlikePost"
			}
			_, resp := run(t, js, executor.Request{Query: `mutation { ` + op + `(postId: "` + sample.HelloPost + `") { likeCount } }`,
				Identity: signedIn(users[i%100])})
			errors[i] = resp.Errors
		})
	}
	wg.Wait()
	for i, e := range errors {
		if len(e) != 0 {
			t.Errorf("mutation %d: %+v", i, e)
		}
	}
	listed := 0
	token := ""
	for {
		data, resp := run(t, js, executor.Request{Query: `query Q($t: String) { post(id: "` + sample.HelloPost + `") { likeCount likes(limit: 100, nextToken: $t) { items { user { id } } nextToken } } }`,
			Variables: map[string]any{"t": token}, Identity: signedIn(sample.Alice)})
		if len(resp.Errors) != 0 {
			t.Fatal(resp.Errors)
		}
		listed += len(get(data, "post", "likes", "items").([]any))
		next, _ := get(data, "post", "likes", "nextToken").(string)
		if next == "" {
			if count := get(data, "post", "likeCount"); count != float64(listed) {
				t.Errorf("likeCount %v, %d likes listed", count, listed)
			}
			t.Logf("%d likes after 200 concurrent likes and unlikes", listed)
			return
		}
		token = next
	}
}

// A hot post's likes through the API, in both layouts: liked by 30 users
// after it turned hot (into its shards), its likes page to the end, 7 at a
// time, with every liker once and their names, and likedByMe is true for
// each liker.
func TestAHotPostsLikesPageThroughTheAPI(t *testing.T) {
	d := sample.Blog(1, 0, 30)
	post := d.Posts[1]
	js, _, jsStore := setupStore(t, d, resolver.CoreRoutes, nil, nil)
	direct, _, directStore := setupStore(t, d, resolver.CoreRoutes, []executor.Option{executor.WithDirectResolvers()}, []resolver.Option{resolver.WithoutAnswers()})
	for name, layout := range map[string]struct {
		e *executor.Executor
		s *store.Store
	}{"early return": {js, jsStore}, "direct": {direct, directStore}} {
		// A like from before, in the post's own partition; then hot.
		run(t, layout.e, executor.Request{Query: `mutation { likePost(postId: "` + post.ID + `") { id } }`, Identity: signedIn(sample.Alice)})
		if err := hotkeys.Of(layout.s).MakeHot(t.Context(), post.ID); err != nil {
			t.Fatal(err)
		}
		likers := []string{sample.Alice}
		for i := range 30 {
			u := fmt.Sprintf("u_reader%02d", i+1)
			data, _ := run(t, layout.e, executor.Request{Query: `mutation { likePost(postId: "` + post.ID + `") { id likedByMe } }`, Identity: signedIn(u)})
			if get(data, "likePost", "likedByMe") != true {
				t.Fatalf("%s: %s: %v", name, u, data)
			}
			likers = append(likers, u)
		}
		var listed []string
		token := "null"
		for range 10 {
			data, resp := run(t, layout.e, executor.Request{Identity: signedIn(sample.Carol),
				Query: `{ post(id: "` + post.ID + `") { likes(limit: 7, nextToken: ` + token + `) { items { user { id name } } nextToken } } }`})
			if len(resp.Errors) > 0 {
				t.Fatalf("%s: %v", name, resp.Errors)
			}
			for _, it := range get(data, "post", "likes", "items").([]any) {
				listed = append(listed, get(it, "user", "id").(string))
				if get(it, "user", "name") == nil {
					t.Errorf("%s: a like's user has no name: %v", name, it)
				}
			}
			next := get(data, "post", "likes", "nextToken")
			if next == nil {
				break
			}
			token = fmt.Sprintf("%q", next)
		}
		slices.Sort(listed)
		slices.Sort(likers)
		if !slices.Equal(listed, likers) {
			t.Errorf("%s: listed %d likes %v, want %d %v", name, len(listed), listed, len(likers), likers)
		}
	}
}
