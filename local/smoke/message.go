package smoke

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/example/appsync-dynamo/local/realtime"
)

// How AppSync measures a subscription message against its 240 KB, which AWS
// does not define (realtime.MessageReading): three subscribers of the post's
// comments select its body 10, 20 and 30 times under aliases, and the
// largest comment the API takes is made (2,000 four-byte characters: 8,000
// bytes in UTF-8, 24,000 escaped). Which of them receive it, and how its
// characters are written, tell the reading:
//
//	UTF-8 in 245,760 bytes      all three (the third's message is 240,000 bytes and more)
//	UTF-8 in 240,000 bytes      the first two
//	escaped, in 245,760 bytes   the first (240,000 bytes and more)
//	escaped, in 240,000 bytes   none
var largestComment = strings.Repeat("😀", 2000)

// checkMessages tells the reading of the API at t, on the post postID; it
// fails when what arrives fits none of the four.
func checkMessages(ctx context.Context, t Target, postID string, say func(string, ...any)) error {
	var subs []*websocket.Conn
	defer func() {
		for _, s := range subs {
			s.CloseNow()
		}
	}()
	for n := 1; n <= 3; n++ {
		var aliases []string
		for i := range 10 * n {
			aliases = append(aliases, fmt.Sprintf("b%d: body", i))
		}
		s, err := subscribe(ctx, t, `subscription($p: ID!) { onCreateComment(postId: $p) { id `+strings.Join(aliases, " ")+` } }`,
			map[string]any{"p": postID})
		if err != nil {
			return failed(say, "a subscription to the post's comments", response{}, err)
		}
		s.SetReadLimit(1 << 20) // past 240 KB: a reading none of the four is told, not a failed read
		subs = append(subs, s)
	}
	c, err := post(ctx, t, true, `mutation($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id body postId } }`,
		map[string]any{"p": postID, "b": largestComment})
	if err != nil || len(c.Errors) > 0 {
		return failed(say, "createComment of 2,000 four-byte characters", c, err)
	}
	reading, sizes, err := readMessages(ctx, subs)
	if err != nil {
		say("FAIL subscription messages: %v (the largest comment selected 10, 20, 30 times arrived as %v bytes)", err, sizes)
		return err
	}
	say("ok   subscription messages: %s (the largest comment selected 10, 20, 30 times arrived as %v bytes; 0: not delivered)%s",
		reading, sizes, map[bool]string{true: ": a subscriber who selects the largest post's body receives nothing (docs/live.md)"}[reading == realtime.EscapedOf240000])
	return nil
}

// readMessages waits for the largest comment's message on each subscriber,
// in order, and tells the reading from which arrived and how the first is
// written (sizes: each message's bytes, 0 for none).
func readMessages(ctx context.Context, subs []*websocket.Conn) (realtime.MessageReading, []int, error) {
	sizes := make([]int, len(subs))
	arrived, escaped := 0, false
	for i, s := range subs {
		m, err := awaitRaw(ctx, s, deliveryWait)
		if err != nil {
			break // a larger one will not arrive if this did not
		}
		sizes[i], arrived = len(m), i+1
		if i == 0 {
			escaped = bytes.Contains(bytes.ToLower(m), []byte(`\ud83d\ude00`))
			if !escaped && !bytes.Contains(m, []byte("😀")) {
				return 0, sizes, fmt.Errorf("the comment arrived without its characters: %.200s", m)
			}
		}
	}
	for _, r := range realtime.MessageReadings {
		if want := map[realtime.MessageReading]int{realtime.UTF8Of245760: 3, realtime.UTF8Of240000: 2, realtime.EscapedOf245760: 1}[r]; want == arrived &&
			(arrived == 0 || r.Escaped() == escaped) {
			return r, sizes, nil
		}
	}
	return 0, sizes, fmt.Errorf("%d of 3 arrived (escaped: %v): none of the readings the local AppSync offers", arrived, escaped)
}

// awaitRaw is await of a data message, which it returns as written.
func awaitRaw(ctx context.Context, ws *websocket.Conn, d time.Duration) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return nil, err
		}
		var m message
		switch json.Unmarshal(b, &m); m.Type {
		case "data":
			return b, nil
		case "ka":
		default:
			return nil, fmt.Errorf("a message %.200s, want data", b)
		}
	}
}
