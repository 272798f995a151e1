package devserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	neturl "net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/live"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

const onFeed = `subscription F { onFeed { post { id authorId title status } } }`

// A signed-in reader's feed is pushed to them as the projector publishes it
// from the table's stream: alice, who follows bob, receives bob's new post
// once, and his draft only once published; carol, who does not, and bob
// himself receive nothing; an API-key caller may not subscribe; no one may
// call pushFeed but the projector's role.
func TestTheFeedIsPushedToItsReaders(t *testing.T) {
	api := openSample(t)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"

	anonymous := connect(t, srv, "")
	anonymous.start("feed", onFeed, nil)
	if m := anonymous.next("error"); !strings.Contains(string(m.Payload), "Unauthorized") {
		t.Errorf("an API-key caller's feed: %s", m.Payload)
	}
	subscribers := map[string]*wsClient{}
	for _, name := range []string{"alice", "bob", "carol"} {
		c := connect(t, srv, devserver.Token(name))
		c.start("feed", onFeed, nil)
		c.next("start_ack")
		subscribers[name] = c
	}
	if r := post(t, url, devserver.Token("alice"), `mutation { pushFeed(postId: "`+sample.HelloPost+`", readers: ["u_alice"]) { readers } }`); len(r.Errors) == 0 {
		t.Error("a signed-in user called pushFeed, which is the projector's alone")
	}

	r := post(t, url, devserver.Token("bob"), `mutation { createPost(input: {title: "Draft", body: "b", status: DRAFT}) { id } }`)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	draft := r.Data["createPost"].(map[string]any)["id"].(string)
	published := bobsPost(t, url)
	if m := subscribers["alice"].next("data"); !strings.Contains(string(m.Payload), `"id":"`+published+`"`) ||
		!strings.Contains(string(m.Payload), `"status":"PUBLISHED"`) {
		t.Errorf("alice's feed got %s, want bob's post %s", m.Payload, published)
	}
	if r := post(t, url, devserver.Token("bob"), `mutation { publishPost(id: "`+draft+`") { id } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if m := subscribers["alice"].next("data"); !strings.Contains(string(m.Payload), `"id":"`+draft+`"`) {
		t.Errorf("alice's feed got %s, want bob's draft %s once published", m.Payload, draft)
	}
	for name, c := range subscribers {
		if m, ok := c.within(500 * time.Millisecond); ok {
			t.Errorf("%s's feed got %s", name, m.Payload)
		}
	}
}

// The largest post the API takes, pushed with a full chunk of the longest
// reader IDs, reaches a reader whole: the message stays within AppSync's
// limit as the hub encodes it (docs/live.md gives its size). The chunk is
// pushed as the projector would push it (Mutation.pushFeed, as its role),
// not left to the projector, which has the 2,090 follows to project first.
func TestTheLargestFeedPushArrivesWhole(t *testing.T) {
	data := sample.Data()
	// As many of the longest IDs (64 characters) as one chunk holds with
	// alice's, which sorts after them: one publication, the largest.
	n := (live.MaxReaderBytes - 2 - (len(sample.Alice) + 3)) / (64 + 3)
	var readers []any
	for i := range n {
		readers = append(readers, fmt.Sprintf("%064d", i))
	}
	readers = append(readers, sample.Alice)
	for _, r := range readers {
		data.Follows = append(data.Follows, store.Follow{FollowerID: r.(string), FollowedID: sample.Bob, CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
		Table: fmt.Sprintf("push-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: data})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	alice := connect(t, srv, devserver.Token("alice"))
	alice.start("feed", `subscription F { onFeed { post { id title body } readers } }`, nil)
	alice.next("start_ack")
	body, title := strings.Repeat("😀", 20000), strings.Repeat("😀", 200)
	r := postVars(t, srv.URL+"/graphql", devserver.Token("bob"), `mutation P($t: String!, $b: String!) { createPost(input: {title: $t, body: $b}) { id } }`,
		map[string]any{"t": title, "b": body})
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	role := &appsync.Identity{AccountID: devserver.LocalAccount, UserArn: devserver.ProjectorRole, Username: "projector"}
	pushed := api.Exec.Execute(t.Context(), executor.Request{Query: live.PushFeedMutation, Identity: role, Variables: map[string]any{
		"id": r.Data["createPost"].(map[string]any)["id"], "after": nil, "readers": readers}})
	if len(pushed.Errors) > 0 {
		t.Fatal(pushed.Errors)
	}
	m := alice.next("data")
	if !strings.Contains(string(m.Payload), body) || !strings.Contains(string(m.Payload), sample.Alice) {
		t.Fatalf("the largest push arrived as %d bytes", len(m.Payload))
	}
	if n := api.Hub.Dropped(); n != 0 {
		t.Errorf("%d deliveries dropped", n)
	}
	if c := strings.Count(string(m.Payload), `"0000`); c != n {
		t.Errorf("the push named %d of the longest readers, want %d", c, n)
	}
	doc, err := os.ReadFile("../../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	says := fmt.Sprintf("%s readers of the longest IDs, in about %d kB", humanize(n+1), (len(m.Payload)+500)/1000)
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), says) {
		t.Errorf("docs/live.md does not say %q", says)
	}
}

// humanize writes n with a comma every three digits.
func humanize(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// A subscriber whose token expires gets AppSync's error for each of its
// subscriptions (UnauthorizedException, "Token has expired."), and nothing
// after; another subscriber of the same post is not slowed and misses
// nothing; the expired token starts no subscription and sends no request.
func TestASubscriberWhoseTokenExpires(t *testing.T) {
	t.Parallel() // most of it is waiting for the token to expire
	api := openSample(t)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	const activity = `subscription A($id: ID!) { onPostActivity(id: $id) { id likeCount } }`
	vars := map[string]any{"id": sample.HelloPost}
	// Long enough for the connections, the subscriptions and a delivery on a
	// loaded machine under the race detector (2 s was not, 2 runs in 20).
	expiring := devserver.TokenUntil("alice", time.Now().Add(10*time.Second))
	alice, bob := connect(t, srv, expiring), connect(t, srv, devserver.Token("bob"))
	for _, c := range []*wsClient{alice, bob} {
		c.start("activity", activity, vars)
		c.next("start_ack")
	}
	like := func(mutation string) {
		t.Helper()
		if r := post(t, url, devserver.Token("carol"), `mutation { `+mutation+`(postId: "`+sample.HelloPost+`") { id likeCount } }`); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	like("likePost")
	for _, c := range []*wsClient{alice, bob} {
		if m := c.next("data"); !strings.Contains(string(m.Payload), `"likeCount":2`) {
			t.Errorf("before the expiry: %s", m.Payload)
		}
	}
	m, ok := alice.within(15 * time.Second)
	if !ok || m.Type != "error" || m.ID != "activity" || !strings.Contains(string(m.Payload), `"errorType":"UnauthorizedException"`) ||
		!strings.Contains(string(m.Payload), "Token has expired.") {
		t.Fatalf("at the expiry: %+v %s", m, m.Payload)
	}
	like("unlikePost")
	if m := bob.next("data"); !strings.Contains(string(m.Payload), `"likeCount":1`) {
		t.Errorf("the other subscriber, after the expiry: %s", m.Payload)
	}
	if m, ok := alice.within(300 * time.Millisecond); ok {
		t.Errorf("the expired subscriber got %+v %s", m, m.Payload)
	}
	alice.start("again", activity, vars)
	if m := alice.next("error"); !strings.Contains(string(m.Payload), "Token has expired.") {
		t.Errorf("a subscription started with the expired token: %s", m.Payload)
	}
	if r := post(t, url, expiring, `{ post(id: "`+sample.HelloPost+`") { id } }`); len(r.Errors) == 0 || r.Errors[0].ErrorType != "UnauthorizedException" {
		t.Errorf("a request with the expired token: %+v", r)
	}
}

// failing is a proxy to DynamoDB Local that answers a DynamoDB operation
// with a ThrottlingException while it has failures left for it (the
// streams' requests always pass).
type failing struct {
	mu   sync.Mutex
	left map[string]int // operation -> failures left (-1: every one)
}

func (f *failing) set(op string, n int) { f.mu.Lock(); f.left[op] = n; f.mu.Unlock() }

func (f *failing) fails(op string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.left[op]
	if n > 0 {
		f.left[op] = n - 1
	}
	return n != 0
}

func failingDynamoDB(t *testing.T) (*failing, string) {
	backend, err := neturl.Parse(storetest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	f := &failing{left: map[string]int{}}
	proxy := httputil.NewSingleHostReverseProxy(backend)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if op, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "DynamoDB_20120810."); ok && f.fails(op) {
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"com.amazonaws.dynamodb.v20120810#ThrottlingException","message":"Rate of requests exceeds the allowed throughput."}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return f, srv.URL
}

// With DynamoDB failing, a subscription that needs it is refused with the
// Lambda's error type (Throttled), at once, and starts once DynamoDB
// answers; a push whose Lambda call fails fails the stream's record, and
// its retry pushes the post, once.
func TestLiveUpdatesWithDynamoDBFailing(t *testing.T) {
	f, endpoint := failingDynamoDB(t)
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: endpoint,
		Table: fmt.Sprintf("fail-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	const activity = `subscription A($id: ID!) { onPostActivity(id: $id) { id likeCount } }`
	bob := connect(t, srv, devserver.Token("bob"))
	f.set("Query", -1)
	bob.start("refused", activity, map[string]any{"id": sample.HelloPost})
	if m := bob.next("error"); !strings.Contains(string(m.Payload), `"errorType":"Throttled"`) {
		t.Errorf("a subscription with DynamoDB failing: %s", m.Payload)
	}
	f.set("Query", 0)
	bob.start("started", activity, map[string]any{"id": sample.HelloPost})
	bob.next("start_ack")

	alice := connect(t, srv, devserver.Token("alice"))
	alice.start("feed", onFeed, nil)
	alice.next("start_ack")
	f.set("BatchGetItem", 4) // the first call's three attempts, and the retry's first
	id := bobsPost(t, srv.URL+"/graphql")
	m, ok := alice.within(20 * time.Second)
	if !ok || !strings.Contains(string(m.Payload), id) {
		t.Fatalf("after DynamoDB failed the push: %+v %s", m, m.Payload)
	}
	if f.fails("BatchGetItem") {
		t.Error("the push's follows were not read again after they failed")
	}
	if m, ok := alice.within(500 * time.Millisecond); ok {
		t.Errorf("the post arrived twice: %s", m.Payload)
	}
}

// A subscription with an alias, a named fragment, an inline fragment and
// variables receives what it selected, under its alias.
func TestASubscriptionWithAliasesAndFragments(t *testing.T) {
	api := openSample(t)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	alice := connect(t, srv, devserver.Token("alice"))
	alice.start("s", `subscription S($id: ID!) { mine: onPostActivity(id: $id) { ...Counts ... on Post { heading: title } } }
		fragment Counts on Post { id likes: likeCount }`, map[string]any{"id": sample.HelloPost})
	alice.next("start_ack")
	if r := post(t, srv.URL+"/graphql", devserver.Token("carol"), `mutation { likePost(postId: "`+sample.HelloPost+`") { id likeCount title } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	m := alice.next("data")
	var got struct {
		Data struct {
			Mine struct {
				ID      string
				Likes   int
				Heading string
			}
		}
	}
	if err := json.Unmarshal(m.Payload, &got); err != nil || got.Data.Mine.ID != sample.HelloPost || got.Data.Mine.Likes != 2 || got.Data.Mine.Heading != "Hello" {
		t.Errorf("got %s (%v)", m.Payload, err)
	}
}
