package smoke

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The live checks: a subscription to the post's comments, over AppSync's
// real-time protocol as the signed-in caller, receives the comment made
// after it started; and, where the API has the live feature
// (Mutation.invalidatePost), deleting the post ends the subscription with a
// complete message, from the table's stream.

// deliveryWait is how long a comment's delivery may take; endWait how long
// a deleted post's subscriptions may take to end (the stream's delay, the
// projector's batch window and its call of the API).
const (
	maxMessage   = 240 << 10 // AppSync's largest subscription message
	deliveryWait = 10 * time.Second
	endWait      = 60 * time.Second
)

// checkLive runs the live checks on postID, deleting it.
func checkLive(ctx context.Context, t Target, postID string, say func(string, ...any)) error {
	sub, err := subscribe(ctx, t, `subscription($p: ID!) { onCreateComment(postId: $p) { id body } }`, map[string]any{"p": postID})
	if err != nil {
		return failed(say, "a subscription to the post's comments", response{}, err)
	}
	defer sub.CloseNow()
	c, err := post(ctx, t, true, `mutation($p: ID!) { createComment(input: {postId: $p, body: "Live!"}) { id body postId } }`, map[string]any{"p": postID})
	if err != nil || len(c.Errors) > 0 {
		return failed(say, "createComment for the subscriber", c, err)
	}
	m, err := await(ctx, sub, deliveryWait, "data")
	if err != nil || !strings.Contains(string(m.Payload), `"Live!"`) {
		return failed(say, "the comment's delivery to the subscriber", response{}, fmt.Errorf("%v (got %s)", err, m.Payload))
	}
	say("ok   a subscription to the post's comments received the comment made after it started")
	types, err := post(ctx, t, true, `{ __type(name: "Mutation") { fields { name } } }`, nil)
	if err != nil || !strings.Contains(fmt.Sprint(types.Data), "invalidatePost") {
		say("skip the API has no live feature (Mutation.invalidatePost): a deleted post's subscriptions are not ended")
		return nil
	}
	d, err := post(ctx, t, true, `mutation($p: ID!) { deletePost(id: $p) { id } }`, map[string]any{"p": postID})
	if err != nil || len(d.Errors) > 0 {
		return failed(say, "deletePost", d, err)
	}
	start := time.Now()
	if _, err := await(ctx, sub, endWait, "complete"); err != nil {
		return failed(say, "the deleted post's subscription ended", response{}, err)
	}
	say("ok   deleting the post ended the subscription (complete after %s)", time.Since(start).Round(time.Millisecond))
	return nil
}

type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id"`
	Payload json.RawMessage `json:"payload"`
}

// realtimeEndpoint is the real-time endpoint of the GraphQL endpoint u: AppSync's
// (appsync-api becomes appsync-realtime-api, over wss), or make dev's
// (/graphql/realtime, over ws).
func realtimeEndpoint(u string) (endpoint, host string, err error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", "", err
	}
	host = p.Host
	p.Scheme = map[string]string{"https": "wss", "http": "ws"}[p.Scheme]
	if strings.Contains(p.Host, ".appsync-api.") {
		p.Host = strings.Replace(p.Host, ".appsync-api.", ".appsync-realtime-api.", 1)
	} else {
		p.Path += "/realtime"
	}
	return p.String(), host, nil
}

// subscribe opens a connection as the signed-in caller, starts the
// subscription and waits for its start_ack.
func subscribe(ctx context.Context, t Target, query string, vars map[string]any) (*websocket.Conn, error) {
	endpoint, host, err := realtimeEndpoint(t.URL)
	if err != nil {
		return nil, err
	}
	auth := map[string]string{"host": host, "Authorization": t.Token}
	header, _ := json.Marshal(auth)
	ws, _, err := websocket.Dial(ctx, endpoint+"?header="+base64.StdEncoding.EncodeToString(header)+"&payload=e30=",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		return nil, err
	}
	ws.SetReadLimit(maxMessage)
	data, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	for _, m := range []any{
		map[string]any{"type": "connection_init"},
		map[string]any{"type": "start", "id": "smoke", "payload": map[string]any{"data": string(data), "extensions": map[string]any{"authorization": auth}}},
	} {
		b, _ := json.Marshal(m)
		if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
			ws.CloseNow()
			return nil, err
		}
	}
	for _, want := range []string{"connection_ack", "start_ack"} {
		if m, err := await(ctx, ws, deliveryWait, want); err != nil {
			ws.CloseNow()
			return nil, fmt.Errorf("%v (got %s %s)", err, m.Type, m.Payload)
		}
	}
	return ws, nil
}

// await reads messages, keep-alives aside, until one of type want, for at
// most d; another type first is an error.
func await(ctx context.Context, ws *websocket.Conn, d time.Duration, want string) (message, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return message{}, fmt.Errorf("no %s message: %w", want, err)
		}
		var m message
		if json.Unmarshal(b, &m) != nil || m.Type == "ka" {
			continue
		}
		if m.Type != want {
			return m, fmt.Errorf("a %s message, want %s", m.Type, want)
		}
		return m, nil
	}
}
