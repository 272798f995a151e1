package smoke

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// checkFeed checks the pushed feed, where the API has it (Subscription.onFeed)
// and the target a second signed-in user: the reader follows the author
// (authorID, t's user, whose handle the reader's extends), subscribes to their own feed, and receives the post
// the author then publishes, from the table's stream (the projector's
// pushFeed). The post is deleted after.
func checkFeed(ctx context.Context, t Target, authorID, authorHandle string, say func(string, ...any)) error {
	if t.Reader == "" {
		say("skip no second user to read a feed (Target.Reader): the pushed feed is not checked")
		return nil
	}
	types, err := post(ctx, t, true, `{ __type(name: "Subscription") { fields { name } } }`, nil)
	if err != nil || !strings.Contains(fmt.Sprint(types.Data), "onFeed") {
		say("skip the API has no pushed feed (Subscription.onFeed)")
		return nil
	}
	reader := t
	reader.Token = t.Reader
	u, err := post(ctx, reader, true, `mutation($h: String!) { createUser(input: {handle: $h, name: "Smoke Reader", email: "smoke@example.com"}) { id } }`,
		map[string]any{"h": authorHandle + "_reader"})
	if err != nil || len(u.Errors) > 0 {
		return failed(say, "createUser as the second user", u, err)
	}
	f, err := post(ctx, reader, true, `mutation($a: ID!) { follow(userId: $a) { followedId } }`, map[string]any{"a": authorID})
	if err != nil || len(f.Errors) > 0 {
		return failed(say, "follow the author as the second user", f, err)
	}
	sub, err := subscribe(ctx, reader, `subscription { onFeed { post { id title authorId } } }`, nil)
	if err != nil {
		return failed(say, "a subscription to the second user's feed", response{}, err)
	}
	defer sub.CloseNow()
	p, err := post(ctx, t, true, `mutation { createPost(input: {title: "Smoke feed", body: "Pushed to a follower."}) { id } }`, nil)
	if err != nil || len(p.Errors) > 0 {
		return failed(say, "createPost for the follower's feed", p, err)
	}
	postID, _ := dig(p.Data, "createPost", "id").(string)
	defer post(context.WithoutCancel(ctx), t, true, `mutation($p: ID!) { deletePost(id: $p) { id } }`, map[string]any{"p": postID})
	start := time.Now()
	m, err := await(ctx, sub, endWait, "data")
	if err != nil || !strings.Contains(string(m.Payload), postID) {
		return failed(say, "the post's push to the follower's feed", response{}, fmt.Errorf("%v (got %s)", err, m.Payload))
	}
	say("ok   a follower subscribed to their feed received the post published after (after %s)", time.Since(start).Round(time.Millisecond))
	return nil
}
