package realtime_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/example/appsync-dynamo/local/realtime"
)

// conn is one client connection to a hub, on which start sends start
// messages; out is what the hub sends it, keep-alives left out.
type conn struct {
	t      *testing.T
	ws     *websocket.Conn
	out    <-chan message
	closed error // why the connection ended, once out is closed
}

func dial(t *testing.T, host, caller string) *conn {
	t.Helper()
	header, _ := json.Marshal(map[string]string{"host": host, "Authorization": caller})
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws://"+host+"/graphql/realtime?header="+base64.StdEncoding.EncodeToString(header)+"&payload=e30=",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.CloseNow() })
	ws.SetReadLimit(realtime.MaxMessage)
	out := make(chan message, 256)
	c := &conn{t: t, ws: ws, out: out}
	go func() {
		defer close(out)
		for {
			_, b, err := ws.Read(context.Background())
			if err != nil {
				c.closed = err
				return
			}
			m := message{raw: b}
			json.Unmarshal(b, &m)
			if m.Type != "ka" {
				out <- m
			}
		}
	}()
	c.write(map[string]any{"type": "connection_init"})
	if m := next(t, out); m.Type != "connection_ack" {
		t.Fatalf("connection_init answered %+v", m)
	}
	return c
}

func (c *conn) write(v any) {
	b, _ := json.Marshal(v)
	if err := c.ws.Write(c.t.Context(), websocket.MessageText, b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *conn) start(id, query string, vars map[string]any) message {
	c.t.Helper()
	data, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	c.write(map[string]any{"type": "start", "id": id, "payload": map[string]any{"data": string(data)}})
	return next(c.t, c.out)
}

// stopThenStart stops the subscription stopped, which must answer
// complete, then starts another on onComment and returns its answer.
func (c *conn) stopThenStart(stopped, started string) message {
	c.t.Helper()
	c.write(map[string]any{"type": "stop", "id": stopped})
	if m := next(c.t, c.out); m.Type != "complete" {
		c.t.Fatalf("stop answered %+v", m)
	}
	return c.start(started, onComment, map[string]any{"p": "p1"})
}

// errorType is the errorType of an error message, or "" for another.
func errorType(m message) string {
	var p struct{ Errors []struct{ ErrorType string } }
	if m.Type != "error" || json.Unmarshal(m.Payload, &p) != nil || len(p.Errors) == 0 {
		return ""
	}
	return p.Errors[0].ErrorType
}

const onComment = `subscription ($p: ID!) { onCreateComment(postId: $p) { id } }`

// A subscription has one root field: one field under two aliases is two
// root fields, refused as two fields are (GraphQL's single root field
// rule counts response keys), written directly or through a fragment; a
// comment is then delivered to no one, not once per alias.
func TestASubscriptionHasOneRootField(t *testing.T) {
	h, host := hub(t, nil)
	c := dial(t, host, "reader")
	var aliases []string
	for i := range 600 {
		aliases = append(aliases, fmt.Sprintf("r%d: onCreateComment(postId: $p) { id }", i))
	}
	for i, q := range []string{
		`subscription ($p: ID!) { ` + strings.Join(aliases, " ") + ` }`,
		`subscription ($p: ID!) { a: onCreateComment(postId: $p) { id } ...F } fragment F on Subscription { b: onCreateComment(postId: $p) { id } }`,
	} {
		m := c.start(fmt.Sprint("s", i), q, map[string]any{"p": "p1"})
		if m.Type != "error" || !strings.Contains(string(m.Payload), "must select only one top level field") {
			t.Errorf("%.80s... answered %s %s; want the single root field's refusal", q, m.Type, m.Payload)
		}
	}
	if m := c.start("one", `subscription ($p: ID!) { a: onCreateComment(postId: $p) { id } a: onCreateComment(postId: $p) { id } }`, map[string]any{"p": "p1"}); m.Type != "start_ack" {
		t.Errorf("one response key written twice answered %s %s; want start_ack", m.Type, m.Payload)
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "b"})
	if m := next(t, c.out); m.ID != "one" {
		t.Errorf("%+v arrived; want the one subscription's message", m)
	}
	nothing(t, c.out)
}

// A subscription id is started once on a connection: again while it runs,
// it is refused DuplicatedOperationError and nothing arrives twice; after
// its stop, the id may start again.
func TestARepeatedSubscriptionIDIsRefused(t *testing.T) {
	h, host := hub(t, nil)
	c := dial(t, host, "reader")
	if m := c.start("a", onComment, map[string]any{"p": "p1"}); m.Type != "start_ack" {
		t.Fatalf("start answered %+v", m)
	}
	if m := c.start("a", onComment, map[string]any{"p": "p1"}); errorType(m) != "DuplicatedOperationError" || m.ID != "a" {
		t.Errorf("the id again answered %s %s; want DuplicatedOperationError", m.Type, m.Payload)
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "b"})
	if m := next(t, c.out); m.Type != "data" || m.ID != "a" {
		t.Errorf("%+v arrived; want a's message", m)
	}
	nothing(t, c.out)
	if m := c.stopThenStart("a", "a"); m.Type != "start_ack" {
		t.Errorf("the id after its stop answered %s %s; want start_ack", m.Type, m.Payload)
	}
}

// A connection takes AppSync's quota of subscriptions, 100, and refuses
// the next MaxSubscriptionsReachedError until one stops; another
// connection is not counted with it.
func TestAConnectionTakesAHundredSubscriptions(t *testing.T) {
	_, host := hub(t, nil)
	c := dial(t, host, "reader")
	for i := range realtime.MaxSubscriptions {
		if m := c.start(fmt.Sprint(i), onComment, map[string]any{"p": "p1"}); m.Type != "start_ack" {
			t.Fatalf("subscription %d answered %s %s", i+1, m.Type, m.Payload)
		}
	}
	if m := c.start("over", onComment, map[string]any{"p": "p1"}); errorType(m) != "MaxSubscriptionsReachedError" {
		t.Errorf("subscription %d answered %s %s; want MaxSubscriptionsReachedError", realtime.MaxSubscriptions+1, m.Type, m.Payload)
	}
	if m := dial(t, host, "reader").start("other", onComment, map[string]any{"p": "p1"}); m.Type != "start_ack" {
		t.Errorf("another connection's first answered %s %s", m.Type, m.Payload)
	}
	if m := c.stopThenStart("0", "over"); m.Type != "start_ack" {
		t.Errorf("after a stop, a start answered %s %s; want start_ack", m.Type, m.Payload)
	}
}

// A subscription's selection is bounded as a query's: deeper than the
// API's queryDepthLimit, or holding more fields (aliases counted) than its
// resolverCountLimit lets a query resolve, its start is refused; a
// variable passed null for a non-null argument, its default
// notwithstanding, is refused too.
func TestASubscriptionsSelectionIsBounded(t *testing.T) {
	h, host := hub(t, nil)
	h.DepthLimit, h.FieldLimit = 1, 3
	c := dial(t, host, "reader")
	if m := c.start("deep", onComment, map[string]any{"p": "p1"}); errorType(m) != "QueryDepthLimitExceeded" {
		t.Errorf("a selection 2 deep under a limit of 1 answered %s %s", m.Type, m.Payload)
	}
	h.DepthLimit = 2
	if m := c.start("wide", `subscription { onCreateComment(postId: "p1") { id a: id b: id c: id } }`, nil); errorType(m) != "ResolverExecutionLimitReached" {
		t.Errorf("4 fields under a limit of 3 answered %s %s", m.Type, m.Payload)
	}
	if m := c.start("three", `subscription { onCreateComment(postId: "p1") { id a: id b: id } }`, nil); m.Type != "start_ack" {
		t.Errorf("3 fields under a limit of 3 answered %s %s", m.Type, m.Payload)
	}
	if m := c.start("null", `subscription ($p: ID = "p1") { onCreateComment(postId: $p) { id } }`, map[string]any{"p": nil}); m.Type != "error" ||
		!strings.Contains(string(m.Payload), "has coerced Null value for NonNull type 'ID!'") {
		t.Errorf("a null passed for a non-null argument answered %s %s", m.Type, m.Payload)
	}
	if m := c.start("default", `subscription ($p: ID = "p1") { onCreateComment(postId: $p) { id } }`, nil); m.Type != "start_ack" {
		t.Errorf("the variable's default answered %s %s", m.Type, m.Payload)
	}
}

// A message lists its fields in the order the subscriber selected them,
// as a query's answer does.
func TestAMessageKeepsTheSelectionsOrder(t *testing.T) {
	h, host := hub(t, nil)
	c := dial(t, host, "reader")
	if m := c.start("s", `subscription { onCreateComment(postId: "p1") { postId z: body id __typename } }`, nil); m.Type != "start_ack" {
		t.Fatalf("start answered %+v", m)
	}
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "b"})
	m := next(t, c.out)
	if want := `"payload":{"data":{"onCreateComment":{"postId":"p1","z":"b","id":"c1","__typename":"Comment"}}}`; !strings.Contains(string(m.raw), want) {
		t.Errorf("the message is %s; want it to hold %s", m.raw, want)
	}
}

// A client's message is read up to the reading's limit (realtime.ClientLimits:
// AppSync documents none), and one byte past it closes the connection with
// 1009, message too big, as API Gateway documents for its frames.
func TestAClientsMessageWithinEachReading(t *testing.T) {
	for _, limit := range realtime.ClientLimits {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			h, host := hub(t, nil)
			h.ClientLimit = limit
			c := dial(t, host, "reader")
			start := func(id string, size int64) {
				msg := func(pad int) []byte {
					data, _ := json.Marshal(map[string]any{"query": onComment + strings.Repeat(" ", pad), "variables": map[string]any{"p": "p1"}})
					b, _ := json.Marshal(map[string]any{"type": "start", "id": id, "payload": map[string]any{"data": string(data)}})
					return b
				}
				b := msg(int(size) - len(msg(0)))
				if int64(len(b)) != size {
					t.Fatalf("a message of %d bytes, not %d", len(b), size)
				}
				if err := c.ws.Write(t.Context(), websocket.MessageText, b); err != nil {
					t.Fatal(err)
				}
			}
			start("at", limit)
			if m := next(t, c.out); m.Type != "start_ack" {
				t.Fatalf("a start of %d bytes answered %+v", limit, m)
			}
			start("past", limit+1)
			for range c.out {
			}
			if code := websocket.CloseStatus(c.closed); code != websocket.StatusMessageTooBig {
				t.Errorf("a start of %d bytes ended the connection with %v (%d); want 1009", limit+1, c.closed, code)
			}
		})
	}
}

// What ends a subscription (its token's expiry, an invalidation) reaches
// its client after the messages of what was published before it, never
// ahead of them: they share the deliveries' queue.
func TestAnEndArrivesAfterWhatWasPublishedBefore(t *testing.T) {
	h, host := hub(t, nil)
	c := dial(t, host, "reader")
	if m := c.start("s", onComment, map[string]any{"p": "p1"}); m.Type != "start_ack" {
		t.Fatalf("start answered %+v", m)
	}
	release := realtime.Hold(h)
	h.Publish("createComment", map[string]any{"id": "c1", "postId": "p1", "body": "before"})
	realtime.Expire(h, "s")
	h.Publish("createComment", map[string]any{"id": "c2", "postId": "p1", "body": "after"})
	release()
	if m := next(t, c.out); m.Type != "data" || !strings.Contains(string(m.Payload), `"c1"`) {
		t.Errorf("first %s %s; want the comment published before the expiry", m.Type, m.Payload)
	}
	if m := next(t, c.out); errorType(m) != "UnauthorizedException" {
		t.Errorf("then %s %s; want the expiry's error", m.Type, m.Payload)
	}
	nothing(t, c.out)
}
