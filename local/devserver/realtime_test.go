package devserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/realtime"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// wsClient speaks AppSync's real-time protocol, as a client library does.
type wsClient struct {
	t        testing.TB
	ws       *websocket.Conn
	messages chan wsMessage // what the server sent, keep-alives left out
	kas      atomic.Int32   // keep-alives received
}

type wsMessage struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// connect opens a connection as the caller with the token ("" for the API
// key) and waits for connection_ack.
func connect(t testing.TB, srv *httptest.Server, token string) *wsClient {
	t.Helper()
	host := strings.TrimPrefix(srv.URL, "http://")
	header := map[string]string{"host": host}
	if token == "" {
		header["x-api-key"] = "local"
	} else {
		header["Authorization"] = token
	}
	h, _ := json.Marshal(header)
	url := "ws://" + host + "/graphql/realtime?header=" + base64.StdEncoding.EncodeToString(h) + "&payload=e30="
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(realtime.MaxMessage) // AppSync's largest message, not the library's 32 kB
	c := &wsClient{t: t, ws: ws, messages: make(chan wsMessage, 100)}
	// One reader for the connection's life: a read whose context ends closes
	// the connection, so waits with a timeout wait on the channel instead.
	go func() {
		defer close(c.messages)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				return
			}
			var m wsMessage
			json.Unmarshal(b, &m)
			if m.Type == "ka" {
				c.kas.Add(1)
				continue
			}
			c.messages <- m
		}
	}()
	c.send(map[string]any{"type": "connection_init"})
	ack := c.next("connection_ack")
	var p struct{ ConnectionTimeoutMs int64 }
	if json.Unmarshal(ack.Payload, &p) != nil || p.ConnectionTimeoutMs != 300000 {
		t.Errorf("connection_ack payload %s", ack.Payload)
	}
	return c
}

func (c *wsClient) send(v any) {
	b, _ := json.Marshal(v)
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

// next returns the next message that is not a keep-alive, failing unless
// its type is want.
func (c *wsClient) next(want string) wsMessage {
	c.t.Helper()
	m, ok := c.within(5 * time.Second)
	if !ok || m.Type != want {
		c.t.Fatalf("got %+v (%s), want a %s message", m, m.Payload, want)
	}
	return m
}

// within returns the next message that is not a keep-alive within d.
func (c *wsClient) within(d time.Duration) (wsMessage, bool) {
	select {
	case m, ok := <-c.messages:
		return m, ok
	case <-time.After(d):
		return wsMessage{}, false
	}
}

func (c *wsClient) start(id, query string, vars map[string]any) {
	data, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.send(map[string]any{"type": "start", "id": id, "payload": map[string]any{"data": string(data), "extensions": map[string]any{}}})
}

// openSample opens make dev's API over a new table of the sample data.
func openSample(t testing.TB) *devserver.API {
	t.Helper()
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("rt-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// bobsPost creates a post of bob's through the API at url and returns its ID.
func bobsPost(t testing.TB, url string) string {
	t.Helper()
	r := post(t, url, devserver.Token("bob"), `mutation { createPost(input: {title: "Bob's", body: "b"}) { id } }`)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	return r.Data["createPost"].(map[string]any)["id"].(string)
}

const onComment = `subscription S($postId: ID!) { onCreateComment(postId: $postId) { id body postId author { handle } } }`

// Subscribers get the comments created on their post, with the fields they
// selected, and none of another post's; API-key callers are refused as the
// schema's directives say; stop ends a subscription.
func TestSubscriptionsOverTheRealTimeProtocol(t *testing.T) {
	api := openSample(t)
	api.Hub.KeepAlive = 20 * time.Millisecond
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"

	other := bobsPost(t, url) // a second post

	hello := connect(t, srv, devserver.Token("alice"))
	hello.start("1", onComment, map[string]any{"postId": sample.HelloPost})
	hello.next("start_ack")
	bobs := connect(t, srv, devserver.Token("bob"))
	bobs.start("b", onComment, map[string]any{"postId": other})
	bobs.next("start_ack")

	anonymous := connect(t, srv, "")
	anonymous.start("x", onComment, map[string]any{"postId": sample.HelloPost})
	refused := anonymous.next("error")
	if !strings.Contains(string(refused.Payload), "Not Authorized to access onCreateComment on type Subscription") {
		t.Errorf("an API-key subscriber: %s", refused.Payload)
	}

	// Variables are coerced as for queries: a left-out non-null one refuses
	// the subscription with AppSync's message.
	hello.start("v", onComment, map[string]any{})
	if m := hello.next("error"); !strings.Contains(string(m.Payload), "Variable 'postId' has coerced Null value for NonNull type 'ID!'") {
		t.Errorf("a subscription without its postId: %s", m.Payload)
	}

	comment := `mutation C($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id body postId author { handle } } }`
	create := func(postID, body string) {
		t.Helper()
		r := postVars(t, url, devserver.Token("carol"), comment, map[string]any{"p": postID, "b": body})
		if len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	create(sample.HelloPost, "on hello")
	got := hello.next("data")
	var data struct {
		Data struct {
			OnCreateComment struct {
				ID, Body, PostID string
				Author           struct{ Handle string }
			}
		}
		Errors []struct{ Message string }
	}
	if json.Unmarshal(got.Payload, &data) != nil || got.ID != "1" || data.Data.OnCreateComment.Body != "on hello" ||
		data.Data.OnCreateComment.PostID != sample.HelloPost || data.Data.OnCreateComment.Author.Handle != "carol" || len(data.Errors) > 0 {
		t.Errorf("hello's subscriber got %s", got.Payload)
	}
	if m, ok := bobs.within(300 * time.Millisecond); ok {
		t.Errorf("bob's subscriber got another post's comment: %+v %s", m, m.Payload)
	}
	create(other, "on bob's")
	if m := bobs.next("data"); !strings.Contains(string(m.Payload), "on bob's") {
		t.Errorf("bob's subscriber got %s", m.Payload)
	}
	if m, ok := hello.within(300 * time.Millisecond); ok {
		t.Errorf("hello's subscriber got another post's comment: %+v %s", m, m.Payload)
	}

	// A field the mutation did not select is null, and an error when it cannot be.
	hello.start("2", `subscription { onCreateComment(postId: "`+sample.HelloPost+`") { id createdAt } }`, nil)
	hello.next("start_ack")
	create(sample.HelloPost, "again")
	for range 2 {
		m := hello.next("data")
		if m.ID == "2" && (!strings.Contains(string(m.Payload), `"createdAt":null`) || !strings.Contains(string(m.Payload), "mutation's selection")) {
			t.Errorf("a field the mutation did not select: %s", m.Payload)
		}
	}

	// The largest comment the API accepts arrives whole.
	largest := strings.Repeat("😀", 2000)
	create(sample.HelloPost, largest)
	for range 2 {
		if m := hello.next("data"); m.ID == "1" && !strings.Contains(string(m.Payload), largest) {
			t.Errorf("a 2,000-character comment arrived as %d bytes", len(m.Payload))
		}
	}

	hello.send(map[string]any{"type": "stop", "id": "1"})
	if m := hello.next("complete"); m.ID != "1" {
		t.Errorf("stop answered %+v", m)
	}
	create(sample.HelloPost, "after stop")
	if m := hello.next("data"); m.ID != "2" {
		t.Errorf("after stop, subscription %q still receives", m.ID)
	}
	if hello.kas.Load() == 0 {
		t.Error("no keep-alive (ka) message")
	}
}

func postVars(t testing.TB, url, auth, query string, vars map[string]any) reply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	return postBody(t, url, auth, body)
}

// Amplify, the client library AppSync users use, subscribes through the
// real-time protocol and receives the comments of its post only. Amplify
// derives wss:// from the endpoint, so the server speaks TLS here.
func TestAmplifySubscribes(t *testing.T) {
	srv := amplifyServer(t)
	other := postTLS(t, srv, devserver.Token("bob"), `mutation { createPost(input: {title: "Bob's", body: "b"}) { id } }`, nil).Data["createPost"].(map[string]any)["id"].(string)
	got := amplify(t, srv, devserver.Token("alice"), onComment, map[string]any{"postId": sample.HelloPost}, func() {
		comment := `mutation C($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id body postId author { handle } } }`
		postTLS(t, srv, devserver.Token("carol"), comment, map[string]any{"p": other, "b": "on bob's"})
		postTLS(t, srv, devserver.Token("carol"), comment, map[string]any{"p": sample.HelloPost, "b": "on hello"})
	})
	var event struct {
		Data struct {
			OnCreateComment struct {
				Body, PostID string
				Author       struct{ Handle string }
			}
		}
	}
	if json.Unmarshal([]byte(got), &event) != nil || event.Data.OnCreateComment.Body != "on hello" ||
		event.Data.OnCreateComment.PostID != sample.HelloPost || event.Data.OnCreateComment.Author.Handle != "carol" {
		t.Errorf("Amplify received %s", got)
	}
}

// Amplify's client receives a pushed feed: alice's, bob's new post, which
// the projector publishes from the table's stream.
func TestAmplifyReceivesTheFeed(t *testing.T) {
	srv := amplifyServer(t)
	var id string
	got := amplify(t, srv, devserver.Token("alice"), `subscription { onFeed { post { id authorId title } } }`, nil, func() {
		id = postTLS(t, srv, devserver.Token("bob"), `mutation { createPost(input: {title: "For the feed", body: "b"}) { id } }`, nil).Data["createPost"].(map[string]any)["id"].(string)
	})
	var event struct {
		Data struct {
			OnFeed struct {
				Post struct{ ID, AuthorID, Title string }
			}
		}
	}
	if json.Unmarshal([]byte(got), &event) != nil || event.Data.OnFeed.Post.ID != id || event.Data.OnFeed.Post.AuthorID != sample.Bob {
		t.Errorf("Amplify received %s, want bob's post %s", got, id)
	}
}

// amplifyServer serves make dev's API over TLS, as AppSync's endpoints are,
// for Amplify's client.
func amplifyServer(t *testing.T) *httptest.Server {
	if testing.Short() {
		t.Skip("needs Amplify, which make test installs: skipped under -short (make check)")
	}
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("amplify-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(devserver.Handler(api))
	t.Cleanup(srv.Close)
	return srv
}

// amplify subscribes with Amplify's client (local/realtime/amplify), as
// the caller with token, and once it is ready calls then; it returns the
// first message Amplify received, as it printed it.
func amplify(t *testing.T, srv *httptest.Server, token, query string, vars map[string]any, then func()) string {
	script, err := filepath.Abs("../realtime/amplify/subscribe.mjs")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(script), "node_modules", "aws-amplify")); err != nil {
		t.Fatalf("Amplify is not installed (make test installs it and links local/realtime/amplify/node_modules): %v", err)
	}
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	if vars == nil {
		vars = map[string]any{}
	}
	encoded, _ := json.Marshal(vars)
	cmd := exec.CommandContext(t.Context(), "node", script, srv.URL+"/graphql", token, query, string(encoded), "1")
	cmd.Env = append(os.Environ(), "NODE_EXTRA_CA_CERTS="+ca)
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 10)
	go func() {
		defer close(lines)
		scanner := bufio.NewScanner(stdout)
		for scanner.Scan() {
			lines <- scanner.Text()
		}
	}()
	next := func() string {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("Amplify exited: %v\n%s", cmd.Wait(), stderr.String())
			}
			return l
		case <-time.After(20 * time.Second):
			t.Fatalf("nothing from Amplify\n%s", stderr.String())
		}
		return ""
	}
	if l := next(); l != `{"ready":true}` {
		t.Fatalf("Amplify: %s\n%s", l, stderr.String())
	}
	then()
	got := next()
	if err := cmd.Wait(); err != nil {
		t.Errorf("Amplify: %v\n%s", err, stderr.String())
	}
	return got
}

// postTLS posts a GraphQL request to the TLS server.
func postTLS(t *testing.T, srv *httptest.Server, auth, query string, vars map[string]any) reply {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/graphql", bytes.NewReader(body))
	req.Header.Set("content-type", "application/json")
	req.Header.Set("authorization", auth)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r reply
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || len(r.Errors) > 0 {
		t.Fatalf("%s: %+v %v", query, r.Errors, err)
	}
	return r
}

// A caller may subscribe to a post only as it may read it, through the
// subscription resolver the stack deploys (appsyncjs/root.js, which
// asks the Lambda): someone else's draft and an absent post are refused
// alike, the author follows their own draft's edits and its publication,
// and a subscriber receives its own post's activity alone.
// Under either reading of a filtered subscription's arguments.
func TestSubscribersReadWhatTheyCouldQuery(t *testing.T) {
	for _, reading := range []realtime.FilterReading{realtime.ArgumentsAndFilter, realtime.FilterAlone} {
		t.Run(fmt.Sprint(reading), func(t *testing.T) { subscribersReadWhatTheyCouldQuery(t, reading) })
	}
}

func subscribersReadWhatTheyCouldQuery(t *testing.T, reading realtime.FilterReading) {
	api := openSample(t)
	api.Hub.Filtering = reading
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	r := post(t, url, devserver.Token("alice"), `mutation { createPost(input: {title: "Soon", body: "b", status: DRAFT}) { id } }`)
	if len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	draft := r.Data["createPost"].(map[string]any)["id"].(string)
	const activity = `subscription A($id: ID!) { onPostActivity(id: $id) { id title status likeCount } }`

	bob := connect(t, srv, devserver.Token("bob"))
	for i, c := range []struct{ query, id string }{
		{onComment, draft}, {activity, draft}, {activity, "01HWMMR280YFZMTH8Y8AF1G8GZ"},
	} {
		vars := map[string]any{"postId": c.id, "id": c.id}
		bob.start(fmt.Sprint("refused", i), c.query, vars)
		if m := bob.next("error"); !strings.Contains(string(m.Payload), `"errorType":"Unauthorized"`) ||
			!strings.Contains(string(m.Payload), "Not Authorized to access on") {
			t.Errorf("bob's subscription %d (someone else's draft, or an absent post): %s", i, m.Payload)
		}
	}
	bob.start("bad", activity, map[string]any{"id": "not an id!"})
	if m := bob.next("error"); !strings.Contains(string(m.Payload), "invalid post id") {
		t.Errorf("a malformed id: %s", m.Payload)
	}

	alice := connect(t, srv, devserver.Token("alice"))
	alice.start("own", activity, map[string]any{"id": draft})
	alice.next("start_ack")
	alice.start("hello", activity, map[string]any{"id": sample.HelloPost})
	alice.next("start_ack")
	edit := func(mutation string) {
		t.Helper()
		if r := post(t, url, devserver.Token("alice"), mutation); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	edit(`mutation { updatePost(input: {id: "` + draft + `", title: "Sooner"}) { id title status likeCount } }`)
	if m := alice.next("data"); m.ID != "own" || !strings.Contains(string(m.Payload), `"title":"Sooner"`) {
		t.Errorf("the author's draft's edit arrived as %+v %s", m, m.Payload)
	}
	edit(`mutation { publishPost(id: "` + draft + `") { id title status likeCount } }`)
	if m := alice.next("data"); m.ID != "own" || !strings.Contains(string(m.Payload), `"status":"PUBLISHED"`) {
		t.Errorf("the publication arrived as %+v %s", m, m.Payload)
	}
	if m, ok := alice.within(300 * time.Millisecond); ok {
		t.Errorf("a subscription to hello got the draft's activity: %+v %s", m, m.Payload)
	}
	bob.start("now", activity, map[string]any{"id": draft})
	bob.next("start_ack")
	if r := post(t, url, devserver.Token("bob"), `mutation { likePost(postId: "`+draft+`") { id title status likeCount } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	for _, c := range []*wsClient{alice, bob} {
		if m := c.next("data"); !strings.Contains(string(m.Payload), `"likeCount":1`) {
			t.Errorf("the like arrived as %+v %s", m, m.Payload)
		}
	}
}

// Deleting a post ends every subscription to it, of each subscriber and
// field, with AppSync's complete message, from the table's stream (the
// projector calls Mutation.invalidatePost, an IAM caller); another post's
// subscribers stay subscribed.
func TestADeletedPostsSubscribersAreUnsubscribed(t *testing.T) {
	api := openSample(t)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	other := bobsPost(t, url)
	const activity = `subscription A($id: ID!) { onPostActivity(id: $id) { id likeCount } }`
	alice, bob := connect(t, srv, devserver.Token("alice")), connect(t, srv, devserver.Token("bob"))
	for _, c := range []*wsClient{alice, bob} {
		c.start("comments", onComment, map[string]any{"postId": sample.HelloPost})
		c.next("start_ack")
		c.start("activity", activity, map[string]any{"id": sample.HelloPost})
		c.next("start_ack")
	}
	bob.start("other", activity, map[string]any{"id": other})
	bob.next("start_ack")

	if r := post(t, url, devserver.Token("carol"), `mutation { invalidatePost(id: "`+other+`", subscription: "onPostActivity") }`); len(r.Errors) == 0 {
		t.Error("a signed-in user called invalidatePost, which is the projector's alone")
	}
	if r := post(t, url, devserver.Token("alice"), `mutation { deletePost(id: "`+sample.HelloPost+`") { id } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	for _, c := range []*wsClient{alice, bob} {
		ended := map[string]bool{}
		for range 2 {
			m, ok := c.within(5 * time.Second)
			if !ok || m.Type != "complete" {
				t.Fatalf("after the post's deletion: %+v %s, want complete", m, m.Payload)
			}
			ended[m.ID] = true
		}
		if !ended["comments"] || !ended["activity"] {
			t.Errorf("ended %v, want comments and activity", ended)
		}
	}
	if r := post(t, url, devserver.Token("alice"), `mutation { likePost(postId: "`+other+`") { id likeCount } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if m := bob.next("data"); m.ID != "other" {
		t.Errorf("another post's subscriber got %+v", m)
	}
}

// The largest post the API takes (a title of 200 and a body of 20,000
// four-byte characters) reaches its activity's subscriber whole under each
// reading of AppSync's 240 KB but the strictest (escaped, 240,000 bytes),
// which drops it; docs/live.md says so, with its sizes.
func TestTheLargestPostsActivityArrivesWhole(t *testing.T) {
	size := map[realtime.MessageReading]int{}
	for _, reading := range realtime.MessageReadings {
		t.Run(reading.String(), func(t *testing.T) {
			api := openSample(t)
			api.Hub.Messages = reading
			srv := httptest.NewServer(devserver.Handler(api))
			defer srv.Close()
			alice := connect(t, srv, devserver.Token("alice"))
			alice.start("a", `subscription A($id: ID!) { onPostActivity(id: $id) { id title body } }`, map[string]any{"id": sample.HelloPost})
			alice.next("start_ack")
			body, title := strings.Repeat("😀", 20000), strings.Repeat("😀", 200)
			r := postVars(t, srv.URL+"/graphql", devserver.Token("alice"), `mutation U($id: ID!, $t: String!, $b: String!) { updatePost(input: {id: $id, title: $t, body: $b}) { id title body } }`,
				map[string]any{"id": sample.HelloPost, "t": title, "b": body})
			if len(r.Errors) > 0 {
				t.Fatal(r.Errors)
			}
			m, ok := alice.within(5 * time.Second)
			api.Hub.Wait()
			if reading == realtime.EscapedOf240000 {
				if ok || api.Hub.Dropped() != 1 {
					t.Errorf("past the strictest reading's limit, %+v arrived and %d dropped", m, api.Hub.Dropped())
				}
				return
			}
			var got struct{ Data map[string]map[string]string }
			if !ok || json.Unmarshal(m.Payload, &got) != nil || got.Data["onPostActivity"]["body"] != body || api.Hub.Dropped() != 0 {
				t.Fatalf("the largest post's edit arrived as %+v (%d bytes), %d dropped", ok, len(m.Payload), api.Hub.Dropped())
			}
			size[reading] = len(m.Payload)
		})
	}
	if size[realtime.UTF8Of245760] == 0 || size[realtime.EscapedOf245760] == 0 {
		return // a reading skipped (make check: -short) or failed above measured nothing to check the docs with
	}
	doc, err := os.ReadFile("../../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, says := range []string{
		fmt.Sprintf("in UTF-8, in about %d kB", (size[realtime.UTF8Of245760]+500)/1000),
		fmt.Sprintf("escaped, in about %d kB", (size[realtime.EscapedOf245760]+500)/1000),
	} {
		if !strings.Contains(text, says) {
			t.Errorf("docs/live.md does not say %q", says)
		}
	}
}
