package devserver_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/budget"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

type reply struct {
	Data   map[string]any
	Errors []struct {
		Message, ErrorType string
		Path               []any
	}
	Extensions struct {
		Cost struct {
			LambdaInvocations  int
			DynamoDB           map[string]int
			DynamoDBRoundTrips int `json:"dynamodbRoundTrips"`
			ReadCapacityUnits  float64
			WriteCapacityUnits float64
		}
	}
}

func post(t testing.TB, url, auth, query string) reply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query})
	return postBody(t, url, auth, body)
}

func postBody(t testing.TB, url, auth string, body []byte) reply {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	if auth != "" {
		req.Header.Set("authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatalf("status %d: %v", resp.StatusCode, err)
	}
	return r
}

func TestEndToEndOverHTTP(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("e2e-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Blog(10, 20, 30)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"

	r := post(t, url, "", `{ user(id: "u_alice") { name posts { items { title comments { items { body author { name } } } } } } }`)
	if len(r.Errors) > 0 || r.Data["user"] == nil {
		t.Fatalf("seed query: %+v", r)
	}
	c := r.Extensions.Cost
	// One invocation: Query.user answers the levels below; the JavaScript child resolvers return early.
	// The user is one Query of its profile and counter; no count is selected, so no post counter is read.
	if c.LambdaInvocations != 1 || c.DynamoDB["GetItem"] != 0 || c.DynamoDB["Query"] != 13 || c.DynamoDB["BatchGetItem"] != 1 || c.ReadCapacityUnits <= 0 {
		t.Errorf("cost = %+v", c)
	}

	r = post(t, url, "", `mutation { follow(userId: "u_bob") { followerId } }`)
	if len(r.Errors) != 1 || r.Errors[0].ErrorType != "Unauthorized" || r.Extensions.Cost.WriteCapacityUnits != 0 {
		t.Errorf("anonymous mutation: %+v", r)
	}
	r = post(t, url, devserver.Token("carol"), `mutation { follow(userId: "u_bob") { followerId followed { followerCount } } }`)
	if len(r.Errors) > 0 || r.Extensions.Cost.DynamoDB["TransactWriteItems"] != 1 || r.Extensions.Cost.WriteCapacityUnits <= 0 {
		t.Fatalf("carol follows bob: %+v", r)
	}
	if got := r.Data["follow"].(map[string]any); got["followerId"] != "u_carol" {
		t.Errorf("follow = %v", got)
	}
	r = post(t, url, devserver.Token("carol"), `{ me { handle email } }`)
	if me, _ := r.Data["me"].(map[string]any); me == nil || me["email"] != "carol@example.com" {
		t.Errorf("me = %+v", r)
	}
	r = post(t, url, "", `{ __schema { queryType { name } } }`)
	if r.Data["__schema"] == nil || r.Extensions.Cost.LambdaInvocations != 0 {
		t.Errorf("introspection: %+v", r)
	}
	r = post(t, url, "Bearer not-a-jwt", `{ me { id } }`)
	if len(r.Errors) != 1 || r.Errors[0].ErrorType != "UnauthorizedException" {
		t.Errorf("bad token: %+v", r)
	}
}

// make dev's feed comes from the table's stream: carol follows alice, alice
// posts, and the post shows in carol's feed once the poller has applied
// the records (the time it took is logged, not asserted); alice's
// unfollowed posts leave it at once.
func TestTheFeedThroughTheStream(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("feed-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	carol, alice := devserver.Token("carol"), devserver.Token("alice")
	if r := post(t, url, carol, `mutation { follow(userId: "u_alice") { followerId } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	r := post(t, url, alice, `mutation { createPost(input: {title: "Fresh", body: "b"}) { id } }`)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	start := time.Now()
	for {
		r = post(t, url, carol, `{ feed { items { title author { handle } } } }`)
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
		if items := r.Data["feed"].(map[string]any)["items"].([]any); len(items) > 0 {
			first := items[0].(map[string]any)
			if first["title"] != "Fresh" || first["author"].(map[string]any)["handle"] != "alice" {
				t.Errorf("carol's feed: %v", items)
			}
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the post never reached carol's feed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("in carol's feed %v after the post was created", time.Since(start).Round(time.Millisecond))
	post(t, url, carol, `mutation { unfollow(userId: "u_alice") { followerId } }`)
	if items := post(t, url, carol, `{ feed { items { title } } }`).Data["feed"].(map[string]any)["items"].([]any); len(items) != 0 {
		t.Errorf("after the unfollow: %v", items)
	}
	if r := post(t, url, "", `{ feed { items { title } } }`); len(r.Errors) != 1 {
		t.Errorf("an API key's feed: %+v", r)
	}
}

// A post made hot through make dev, by the threshold the design uses: the
// Blog post's 998 comments, then 12 more through the API (the 1,001st
// turns it hot, and the rest go to its shards), and 20 likes after: once
// the poller has applied the stream, its counts equal its comments and
// likes, which page to the end, oldest and newest first, each once; a post
// that is not hot still reads its comments in one Query.
func TestAHotPostThroughMakeDev(t *testing.T) {
	hotTable := fmt.Sprintf("hot-%d-%d", os.Getpid(), time.Now().UnixNano())
	d := sample.Blog(1, 998, 40)
	hot := d.Posts[len(d.Posts)-1]
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: hotTable, Data: d})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	for i := range 12 {
		if r := post(t, url, devserver.Token(fmt.Sprintf("reader%02d", i+1)), `mutation { createComment(input: {postId: "`+hot.ID+`", body: "past the threshold"}) { id } }`); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	for i := range 20 {
		if r := post(t, url, devserver.Token(fmt.Sprintf("reader%02d", i+1)), `mutation { likePost(postId: "`+hot.ID+`") { id } }`); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	const comments, likes = 998 + 12, 20
	sharded := 0
	for n := range hotkeys.CommentShards {
		sharded += storetest.Count(t, storetest.Client(t), hotTable, "", "pk", hotkeys.ShardPK(hot.ID, n), "sk", store.CommentPrefix)
	}
	if sharded != 10 { // the 999th and 1,000th in its own partition
		t.Errorf("%d comments in the post's shards, want 10: the post did not turn hot at the threshold", sharded)
	}
	start := time.Now()
	for {
		r := post(t, url, "", `{ post(id: "`+hot.ID+`") { commentCount likeCount } }`)
		p, _ := r.Data["post"].(map[string]any)
		if p != nil && p["commentCount"] == float64(comments) && p["likeCount"] == float64(likes+hot.LikeCount) {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("counts never reached %d comments and %d likes: %+v", comments, likes+hot.LikeCount, r)
		}
		time.Sleep(50 * time.Millisecond)
	}
	page := func(field, args string) []string {
		t.Helper()
		var ids []string
		token := "null"
		item, id := "id", func(it map[string]any) string { return it["id"].(string) }
		if field == "likes" {
			item, id = "user { id }", func(it map[string]any) string { return it["user"].(map[string]any)["id"].(string) }
		}
		for range 30 {
			r := post(t, url, devserver.Token("carol"), `{ post(id: "`+hot.ID+`") { `+field+`(limit: 100, nextToken: `+token+args+`) { items { `+item+` } nextToken } } }`)
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			conn := r.Data["post"].(map[string]any)[field].(map[string]any)
			for _, it := range conn["items"].([]any) {
				ids = append(ids, id(it.(map[string]any)))
			}
			next, _ := conn["nextToken"].(string)
			if next == "" {
				return ids
			}
			token = fmt.Sprintf("%q", next)
		}
		t.Fatalf("%s: more than 30 pages", field)
		return nil
	}
	oldest := page("comments", "")
	newest := page("comments", ", order: NEWEST_FIRST")
	if len(oldest) != comments || !slices.IsSorted(oldest) || len(slices.Compact(slices.Clone(oldest))) != comments {
		t.Errorf("oldest first: %d comments, sorted %v, want %d distinct in order", len(oldest), slices.IsSorted(oldest), comments)
	}
	slices.Reverse(newest)
	if !slices.Equal(newest, oldest) {
		t.Errorf("newest first lists %d comments, not the %d oldest first in reverse", len(newest), len(oldest))
	}
	if liked := page("likes", ""); len(liked) != likes+hot.LikeCount || len(slices.Compact(slices.Sorted(slices.Values(liked)))) != len(liked) {
		t.Errorf("%d likes listed, want %d distinct", len(liked), likes+hot.LikeCount)
	}
	// Its page, kept in make dev's environment, is still each caller's:
	// likedByMe per caller, and a draft of its author's to its author only.
	for caller, want := range map[string]any{"reader01": true, "carol": false, "": false} {
		auth := ""
		if caller != "" {
			auth = devserver.Token(caller)
		}
		if r := post(t, url, auth, `{ post(id: "`+hot.ID+`") { likedByMe } }`); len(r.Errors) > 0 || r.Data["post"].(map[string]any)["likedByMe"] != want {
			t.Errorf("%q reads likedByMe %+v, want %v", caller, r, want)
		}
	}
	d2 := post(t, url, devserver.Token("alice"), `mutation { createPost(input: {title: "a draft", body: "not yet", status: DRAFT}) { id } }`)
	draft, _ := d2.Data["createPost"].(map[string]any)["id"].(string)
	for caller, visible := range map[string]bool{"alice": true, "bob": false} {
		if r := post(t, url, devserver.Token(caller), `{ post(id: "`+draft+`") { title } }`); (r.Data["post"] != nil) != visible {
			t.Errorf("%s reads alice's draft: %+v", caller, r)
		}
	}
	// A post that is not hot: the post and its comments in one Query.
	r := post(t, url, "", `{ post(id: "`+sample.HelloPost+`") { title comments { items { body } } } }`)
	if c := r.Extensions.Cost; len(r.Errors) > 0 || c.LambdaInvocations != 1 || c.DynamoDB["Query"] != 1 || len(c.DynamoDB) != 1 {
		t.Errorf("a post that is not hot: %+v", r)
	}
}

// The seed's query with x-local-plan: 1 through make dev's server: its
// extensions.plan holds every resolver with how it was resolved, every
// invocation and every DynamoDB request, and its totals equal
// extensions.cost's: one invocation, the early returns, the requests by
// operation, and 4 requests on the critical path, one per level.
func TestThePlanOfTheSeedsQuery(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("plan-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	body, _ := json.Marshal(map[string]any{"query": `{ user(id: "u_alice") { name posts { items { title comments { items { body author { name } } } } } } }`})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set(devserver.PlanHeader, "1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Errors     []any
		Extensions struct {
			Cost executor.Cost
			Plan executor.Plan
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%v %v", err, r.Errors)
	}
	c, p := r.Extensions.Cost, r.Extensions.Plan
	byOp, critical, early := map[string]int{}, 0, 0
	for _, q := range p.Requests {
		byOp[q.Operation]++
		if q.Critical {
			critical++
		}
		if q.Invocation == nil || *q.Invocation >= len(p.Invocations) || q.End < q.Start || q.BytesOut <= 0 || q.BytesIn <= 0 || len(q.KeysAsked) == 0 {
			t.Errorf("request %+v: no invocation made it, it ends before it starts, or it sent or received no bytes", q)
		}
	}
	for _, res := range p.Resolvers {
		if res.ResolvedBy == executor.EarlyReturn {
			early++
		}
	}
	if len(p.Invocations) != c.LambdaInvocations || len(p.Invocations) != 1 || early != c.EarlyReturns || early == 0 ||
		critical != c.DynamoDBRoundTrips || critical != 4 || !maps.Equal(byOp, c.DynamoDB) {
		t.Errorf("plan: %d invocations, %d early returns, %d critical requests, requests %v; cost %+v", len(p.Invocations), early, critical, byOp, c)
	}
	if root := p.Resolvers[0]; root.Path != "/user" || root.ResolvedBy != executor.DirectInvocation || root.Invocation == nil {
		t.Errorf("the root resolver: %+v", root)
	}
	if first := p.Requests[0]; first.Operation != "Query" || len(first.KeysAsked) != 1 || !strings.HasPrefix(first.KeysAsked[0], "USER#u_alice") {
		t.Errorf("the first request, the user's Query: %+v", first)
	}
	if inv := p.Invocations[0]; inv.Field != "Query.user" || inv.Batch != 1 || inv.BytesIn == 0 || inv.BytesOut == 0 {
		t.Errorf("the invocation: %+v", inv)
	}
	// Without the header, no plan.
	plain, err := http.Post(srv.URL+"/graphql", "application/json", strings.NewReader(`{"query": "{ user(id: \"u_alice\") { name } }"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Body.Close()
	if raw, _ := io.ReadAll(plain.Body); !strings.Contains(string(raw), `"cost"`) || strings.Contains(string(raw), `"plan"`) {
		t.Errorf("without the header: %s", raw)
	}
}

// make dev's data is dated from the day it starts (sample.Dev): once the
// stream is applied, every caller of the query page has a full feed, and a
// reader's holds all it follows. The feed each should have is counted from
// the data set: the published posts of whom the caller follows.
func TestEveryCallerOfMakeDevHasAFeed(t *testing.T) {
	d := sample.Dev(time.Now())
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("devfeed-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: d})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	for _, who := range []string{"alice", "bob", "carol", "reader01"} {
		want := 0
		for _, f := range d.Follows {
			for _, p := range d.Posts {
				created, err := time.Parse(time.RFC3339, p.CreatedAt)
				if err != nil {
					t.Fatal(err)
				}
				if f.FollowerID == "u_"+who && p.AuthorID == f.FollowedID && p.Published() && time.Since(created) < feed.TTL {
					want++
				}
			}
		}
		if want == 0 {
			t.Fatalf("%s follows no one who posted lately: the data set gives no feed to check", who)
		}
		start := time.Now()
		for {
			r := post(t, srv.URL+"/graphql", devserver.Token(who), `{ feed(limit: 50) { items { id } } }`)
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			got := len(r.Data["feed"].(map[string]any)["items"].([]any))
			if got == want {
				break
			}
			if time.Since(start) > 20*time.Second {
				t.Fatalf("%s's feed holds %d posts, want %d", who, got, want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// make dev applies the stack's write budget (budget.WritesPerMinute): a
// caller's mutations past it in a minute are refused Throttled with nothing
// written, and each mutation pays for the budget's count as deployed. The
// budget counts calendar minutes, so twice the budget and one more are sent:
// within one minute, all past the budget are refused; across two, each
// minute takes at most the budget, and one at least is refused.
func TestMakeDevAppliesTheWriteBudget(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("budget-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	perMinute, sent := budget.WritesPerMinute, 2*budget.WritesPerMinute+1
	var q strings.Builder
	q.WriteString("mutation {")
	for i := range sent {
		fmt.Fprintf(&q, ` u%d: updateUser(input: {bio: "bio %d"}) { bio }`, i, i)
	}
	q.WriteString(" }")
	start := time.Now().UTC().Truncate(time.Minute)
	r := post(t, srv.URL+"/graphql", devserver.Token("carol"), q.String())
	minutes := int(time.Now().UTC().Truncate(time.Minute).Sub(start)/time.Minute) + 1
	throttled := 0
	for _, e := range r.Errors {
		if e.ErrorType == "Throttled" {
			throttled++
		}
	}
	// The first refusal nulls data (updateUser is non-null) and ends the
	// mutation: nothing after it runs.
	accepted := r.Extensions.Cost.LambdaInvocations - throttled
	switch {
	case throttled != len(r.Errors):
		t.Fatalf("errors other than Throttled: %+v", r.Errors)
	case minutes == 1 && accepted != perMinute, accepted > minutes*perMinute, throttled != 1:
		t.Fatalf("%d mutations by one caller over %d calendar minutes: %d accepted, %d refused; the budget is %d a minute", sent, minutes, accepted, throttled, perMinute)
	}
	one := post(t, srv.URL+"/graphql", devserver.Token("bob"), `mutation { updateUser(input: {bio: "b"}) { bio } }`)
	if len(one.Errors) > 0 || one.Extensions.Cost.DynamoDB["UpdateItem"]+one.Extensions.Cost.DynamoDB["TransactWriteItems"] < 2 {
		t.Errorf("one mutation, its budget counted: %+v", one.Extensions.Cost)
	}
}
