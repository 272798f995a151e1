package realtime_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/realtime"
)

const hubSchema = `
directive @aws_subscribe(mutations: [String]) on FIELD_DEFINITION
type Query { post(id: ID!): Post }
type Mutation { createComment(postId: ID!, body: String!): Comment }
type Subscription { onCreateComment(postId: ID!): Comment @aws_subscribe(mutations: ["createComment"]) }
type Post { id: ID! }
type Comment { id: ID! postId: ID! body: String! }
`

// hub serves a Hub over schema whose subscription resolver is resolve.
func hub(t *testing.T, resolve realtime.Resolve) (*realtime.Hub, string) {
	t.Helper()
	s := gqlparser.MustLoadSchema(&ast.Source{Name: "hub.graphql", Input: hubSchema})
	identify := func(h map[string]string) (*appsync.Identity, error) {
		return &appsync.Identity{Sub: h["Authorization"]}, nil
	}
	h := realtime.New(s, identify, func(*ast.Definition, *ast.FieldDefinition, *appsync.Identity) bool { return true })
	h.Resolve = resolve
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, strings.TrimPrefix(srv.URL, "http://")
}

type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
	raw     []byte          // the whole message, as written
}

// subscriber connects as caller and starts id on postId, returning what
// the hub sends it, keep-alives left out.
func subscriber(t *testing.T, host, caller, id, postID string) <-chan message {
	t.Helper()
	return subscribe(t, host, caller, id, `subscription ($p: ID!) { onCreateComment(postId: $p) { id postId body } }`, map[string]any{"p": postID})
}

// subscribe connects as caller and starts id with query and vars, the
// caller's authorization in its extensions.
func subscribe(t *testing.T, host, caller, id, query string, vars map[string]any) <-chan message {
	t.Helper()
	c := dial(t, host, caller)
	data, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.write(map[string]any{"type": "start", "id": id, "payload": map[string]any{"data": string(data), "extensions": map[string]any{"authorization": map[string]string{"host": host, "Authorization": caller}}}})
	return c.out
}

func next(t *testing.T, from <-chan message) message {
	t.Helper()
	select {
	case m := <-from:
		return m
	case <-time.After(5 * time.Second):
		t.Fatal("nothing arrived in 5 s")
		return message{}
	}
}

func nothing(t *testing.T, from <-chan message) {
	t.Helper()
	select {
	case m := <-from:
		t.Fatalf("%+v arrived; want nothing", m)
	case <-time.After(100 * time.Millisecond):
	}
}

func eqFilter(field, value string) map[string]any {
	return map[string]any{"filterGroup": []any{map[string]any{"filters": []any{
		map[string]any{"fieldName": field, "operator": "eq", "value": value}}}}}
}

// A subscription resolver decides, as AppSync's does: its error refuses the
// subscription with its type, a filter past AppSync's limits refuses it,
// its filter narrows what is delivered, and its invalidation filter is what
// a mutation's invalidation ends it by, with a complete message.
func TestTheSubscriptionResolverRefusesFiltersAndInvalidates(t *testing.T) {
	h, host := hub(t, func(_ context.Context, f *ast.Field, args map[string]any, caller *appsync.Identity) (realtime.Filters, error) {
		switch {
		case args["postId"] == "draft" && caller.Sub != "author":
			return realtime.Filters{}, &realtime.Refusal{Type: "Unauthorized", Message: "Not Authorized to access onCreateComment on type Subscription"}
		case args["postId"] == "wide":
			groups := make([]any, realtime.MaxFilters+1)
			for i := range groups {
				groups[i] = eqFilter("postId", "wide")["filterGroup"].([]any)[0]
			}
			return realtime.Filters{Filter: map[string]any{"filterGroup": groups}}, nil
		}
		// Only comments whose body is not "hidden", on the post subscribed to.
		filter := map[string]any{"filterGroup": []any{map[string]any{"filters": []any{
			map[string]any{"fieldName": "postId", "operator": "eq", "value": args["postId"]},
			map[string]any{"fieldName": "body", "operator": "ne", "value": "hidden"}}}}}
		return realtime.Filters{Filter: filter, Invalidation: eqFilter("postId", args["postId"].(string))}, nil
	})
	if m := next(t, subscriber(t, host, "stranger", "s1", "draft")); m.Type != "error" || !strings.Contains(string(m.Payload), "Unauthorized") {
		t.Errorf("a stranger's subscription to a draft: %+v, want refused Unauthorized", m)
	}
	if m := next(t, subscriber(t, host, "author", "s1", "wide")); m.Type != "error" || !strings.Contains(string(m.Payload), "Filters exceed maximum filter groups limit 10") {
		t.Errorf("a filter of 11 groups: %+v, want refused", m)
	}
	author := subscriber(t, host, "author", "a1", "draft")
	reader := subscriber(t, host, "reader", "r1", "p1")
	other := subscriber(t, host, "reader", "o1", "p2")
	for _, c := range []<-chan message{author, reader, other} {
		if m := next(t, c); m.Type != "start_ack" {
			t.Fatalf("start answered %+v", m)
		}
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "hello"})
	h.Publish("createComment", map[string]any{"id": "c2", "postId": "p1", "body": "hidden"})
	if m := next(t, reader); m.Type != "data" || !strings.Contains(string(m.Payload), `"c1"`) {
		t.Errorf("the reader of p1 got %+v, want c1", m)
	}
	nothing(t, reader) // c2 is filtered out
	nothing(t, other)
	nothing(t, author)
	if n := h.Invalidate("onCreateComment", map[string]any{"postId": "p1"}); n != 1 {
		t.Errorf("invalidating p1 ended %d subscriptions, want 1", n)
	}
	if m := next(t, reader); m.Type != "complete" || m.ID != "r1" {
		t.Errorf("the invalidated subscriber got %+v, want complete of r1", m)
	}
	h.Publish("createComment", map[string]any{"id": "c3", "postId": "p1", "body": "after"})
	nothing(t, reader)
	h.Publish("createComment", map[string]any{"id": "c4", "postId": "p2", "body": "still"})
	if m := next(t, other); m.Type != "data" || !strings.Contains(string(m.Payload), `"c4"`) {
		t.Errorf("the reader of p2 got %+v after p1's invalidation, want c4", m)
	}
}

// The tests' sizes, which docs/live.md states.
const (
	thousand = 1000 // subscribers of one post
	comments = 2000 // of the largest, published in rounds
	round    = 100  // comments a round
)

// 1,000 subscribers of one post each receive its comment, once.
func TestAThousandSubscribersOfOnePost(t *testing.T) {
	h, host := hub(t, nil)
	subs := make([]<-chan message, thousand)
	for i := range subs {
		subs[i] = subscriber(t, host, "reader", "s", "p1")
		if m := next(t, subs[i]); m.Type != "start_ack" {
			t.Fatalf("subscriber %d: %+v", i, m)
		}
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "to all"})
	for i, s := range subs {
		if m := next(t, s); m.Type != "data" || !strings.Contains(string(m.Payload), "to all") {
			t.Fatalf("subscriber %d got %+v", i, m)
		}
	}
	time.Sleep(100 * time.Millisecond)
	for i, s := range subs {
		select {
		case m := <-s:
			t.Fatalf("subscriber %d got %+v more", i, m)
		default:
		}
	}
}

// A subscriber that never reads slows no other: once what is queued for it
// is more than its connection holds, the hub closes its connection, and
// every other subscriber receives every comment.
func TestASubscriberThatNeverReads(t *testing.T) {
	h, host := hub(t, nil)
	reader := subscriber(t, host, "reader", "r", "p1")
	next(t, reader) // start_ack
	stuck := stuckSubscriber(t, host, "p1")
	body := strings.Repeat("😀", 2000) // the largest comment
	// In rounds, each waiting for the reader: the reader is never far
	// behind, the one that never reads ever further.
	for r := range comments / round {
		for i := range round {
			h.Publish("createComment", map[string]any{"id": fmt.Sprint("c", r, "-", i), "postId": "p1", "body": body})
		}
		for i := range round {
			if m := next(t, reader); m.Type != "data" {
				t.Fatalf("round %d, comment %d: the reader got %+v", r, i, m)
			}
		}
	}
	// What reached it before the hub gave it up, then the end.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	for {
		if _, _, err := stuck.Read(ctx); err != nil {
			if ctx.Err() != nil {
				t.Error("the subscriber that never reads is still connected")
			}
			return
		}
	}
}

// stuckSubscriber subscribes to postId on a connection it then never reads.
func stuckSubscriber(t *testing.T, host, postID string) *websocket.Conn {
	t.Helper()
	header, _ := json.Marshal(map[string]string{"host": host, "Authorization": "stuck"})
	ws, _, err := websocket.Dial(t.Context(), "ws://"+host+"/graphql/realtime?header="+base64.StdEncoding.EncodeToString(header)+"&payload=e30=",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(realtime.MaxMessage) // AppSync's largest message, not the library's 32 kB
	data, _ := json.Marshal(map[string]any{"query": `subscription { onCreateComment(postId: "` + postID + `") { id body } }`})
	for _, m := range []any{
		map[string]any{"type": "connection_init"},
		map[string]any{"type": "start", "id": "s", "payload": map[string]any{"data": string(data), "extensions": map[string]any{"authorization": map[string]string{"host": host, "Authorization": "stuck"}}}},
	} {
		b, _ := json.Marshal(m)
		if err := ws.Write(t.Context(), websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond) // its start handled before the comments
	return ws
}

// A publication whose message to a subscriber would pass AppSync's 240 KB,
// as the hub's reading measures it, is not delivered (AppSync drops it, and
// tells no one); the hub counts it. Under each reading: a message of
// exactly the limit arrives and one byte more does not; the largest comment
// (2,000 four-byte characters, 8,000 bytes in UTF-8 and 24,000 escaped)
// selected 10, 20 and 30 times under aliases reaches 3, 2, 1 and 0 of its
// subscribers, written as the reading writes it.
func TestAMessagePastAppSyncsLimitIsNotDelivered(t *testing.T) {
	arrive := map[realtime.MessageReading]int{realtime.UTF8Of245760: 3, realtime.UTF8Of240000: 2,
		realtime.EscapedOf245760: 1, realtime.EscapedOf240000: 0}
	for _, reading := range realtime.MessageReadings {
		t.Run(reading.String(), func(t *testing.T) {
			h, host := hub(t, nil)
			h.Messages = reading
			var subs []<-chan message
			for n := 1; n <= 3; n++ {
				var aliases []string
				for i := range 10 * n {
					aliases = append(aliases, fmt.Sprintf("b%d: body", i))
				}
				query := `subscription ($p: ID!) { onCreateComment(postId: $p) { id ` + strings.Join(aliases, " ") + ` } }`
				subs = append(subs, subscribe(t, host, "reader", fmt.Sprint(n), query, map[string]any{"p": "p1"}))
				next(t, subs[n-1]) // start_ack
			}
			largest := strings.Repeat("😀", 2000)
			h.Publish("createComment", map[string]any{"id": "c", "postId": "p1", "body": largest})
			written := largest
			if reading.Escaped() {
				written = strings.Repeat(`\ud83d\ude00`, 2000)
			}
			for n, s := range subs {
				if n < arrive[reading] {
					if m := next(t, s); strings.Count(string(m.raw), written) != 10*(n+1) {
						t.Errorf("the largest comment selected %d times arrived as %d bytes, not so written", 10*(n+1), len(m.raw))
					}
				} else {
					nothing(t, s)
				}
			}
			h.Wait()
			if want := int64(3 - arrive[reading]); h.Dropped() != want {
				t.Errorf("%d dropped, want %d", h.Dropped(), want)
			}

			edge := subscribe(t, host, "reader", "edge", `subscription { onCreateComment(postId: "p2") { body } }`, nil)
			next(t, edge) // start_ack
			h.Publish("createComment", map[string]any{"id": "e", "postId": "p2", "body": ""})
			envelope := len(next(t, edge).raw)
			for _, extra := range []int{0, 1} {
				h.Publish("createComment", map[string]any{"id": "e", "postId": "p2", "body": strings.Repeat("a", reading.Limit()-envelope+extra)})
			}
			if m := next(t, edge); len(m.raw) != reading.Limit() {
				t.Errorf("a message of %d bytes arrived; want one of the limit, %d", len(m.raw), reading.Limit())
			}
			nothing(t, edge)
		})
	}
}

// A subscription's root field may come through a fragment, under an alias,
// and a root field skipped subscribes to nothing, as GraphQL collects a
// subscription's root fields.
func TestASubscriptionThroughAFragment(t *testing.T) {
	h, host := hub(t, nil)
	viaFragment := subscribe(t, host, "reader", "s1", `subscription ($p: ID!) { ...On } fragment On on Subscription { mine: onCreateComment(postId: $p) { body } }`, map[string]any{"p": "p1"})
	skipped := subscribe(t, host, "reader", "s2", `subscription ($p: ID!) { onCreateComment(postId: $p) @skip(if: true) { body } }`, map[string]any{"p": "p1"})
	for _, s := range []<-chan message{viaFragment, skipped} {
		if m := next(t, s); m.Type != "start_ack" {
			t.Fatalf("start answered %+v", m)
		}
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "through"})
	if m := next(t, viaFragment); m.Type != "data" || string(m.Payload) != `{"data":{"mine":{"body":"through"}}}` {
		t.Errorf("through a fragment: %+v %s", m, m.Payload)
	}
	nothing(t, skipped)
}
