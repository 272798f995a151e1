package smoke

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/coder/websocket"

	"github.com/example/appsync-dynamo/local/realtime"
)

// checkClientLimit tells how large a client's message the API at t reads,
// which AppSync does not document for GraphQL subscriptions
// (realtime.ClientLimits): on one connection, starts of each reading's limit
// and one byte more, the smallest first. The first that closes the
// connection with 1009 (message too big) gives the reading; a start at a
// limit must be answered. It fails when the API reads more than every
// reading the local AppSync offers.
func checkClientLimit(ctx context.Context, t Target, postID string, say func(string, ...any)) error {
	endpoint, host, err := realtimeEndpoint(t.URL)
	if err != nil {
		return err
	}
	auth := map[string]string{"host": host, "Authorization": t.Token}
	header, _ := json.Marshal(auth)
	ws, _, err := websocket.Dial(ctx, endpoint+"?header="+base64.StdEncoding.EncodeToString(header)+"&payload=e30=",
		&websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	ws.SetReadLimit(maxMessage)
	send := func(v any) error {
		b, _ := json.Marshal(v)
		return ws.Write(ctx, websocket.MessageText, b)
	}
	if err := send(map[string]any{"type": "connection_init"}); err != nil {
		return err
	}
	if m, err := await(ctx, ws, deliveryWait, "connection_ack"); err != nil {
		return fmt.Errorf("client messages: %v (got %s)", err, m.Type)
	}
	// start is a start message of exactly size bytes: the subscription's
	// query padded with spaces.
	start := func(id string, size int64) map[string]any {
		msg := func(pad int) map[string]any {
			data, _ := json.Marshal(map[string]any{"query": `subscription ($p: ID!) { onCreateComment(postId: $p) { id } }` + strings.Repeat(" ", pad),
				"variables": map[string]any{"p": postID}})
			return map[string]any{"type": "start", "id": id, "payload": map[string]any{"data": string(data), "extensions": map[string]any{"authorization": auth}}}
		}
		b, _ := json.Marshal(msg(0))
		return msg(int(size) - len(b))
	}
	for i, limit := range realtime.ClientLimits {
		if err := send(start(fmt.Sprint("at-", i), limit)); err != nil {
			return fmt.Errorf("client messages: a start of %d bytes: %v", limit, err)
		}
		if _, err := await(ctx, ws, deliveryWait, "start_ack"); err != nil {
			return fmt.Errorf("client messages: a start of %d bytes was not acknowledged: %v", limit, err)
		}
		if err := send(start(fmt.Sprint("past-", i), limit+1)); err != nil {
			return fmt.Errorf("client messages: a start of %d bytes: %v", limit+1, err)
		}
		_, err := await(ctx, ws, deliveryWait, "start_ack")
		if websocket.CloseStatus(err) == websocket.StatusMessageTooBig {
			say("ok   client messages: at most %d bytes (a start of %d closed the connection with 1009)", limit, limit+1)
			return nil
		}
		if err != nil {
			return fmt.Errorf("client messages: a start of %d bytes: %v", limit+1, err)
		}
	}
	return fmt.Errorf("client messages: a start of %d bytes was read: more than every reading the local AppSync offers (%v)",
		realtime.ClientLimits[len(realtime.ClientLimits)-1]+1, realtime.ClientLimits)
}
