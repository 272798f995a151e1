package devserver_test

import (
	"math/rand/v2"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/devserver"
)

// What each reader's pushed feed receives while a script writes, checked
// against the script's own record: five users, each subscribed to their
// feed, while a random script (seeded, printed on failure) creates posts
// published and drafts, publishes, deletes, follows and unfollows, one
// mutation at a time. Then, for each reader and post:
//
//   - nothing arrives twice, and nothing that was never published;
//   - a post arrives only to a reader who followed its author at some
//     moment after its publication (the push reads the follows as it runs);
//   - a post that still stands, whose author the reader followed from
//     before its publication to the end, has arrived (nothing lost).
func TestAScriptAgainstThePushedFeed(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	api := openSample(t)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	users := []string{"alice", "bob", "carol", "dave", "erin"}
	for _, u := range users[3:] {
		if r := post(t, url, devserver.Token(u), `mutation { createUser(input: {handle: "`+u+`", name: "`+u+`", email: "`+u+`@example.com"}) { id } }`); len(r.Errors) > 0 {
			t.Fatal(r.Errors)
		}
	}
	feeds := map[string]*wsClient{}
	for _, u := range users {
		feeds[u] = connect(t, srv, devserver.Token(u))
		feeds[u].start("feed", `subscription { onFeed { post { id authorId status } } }`, nil)
		feeds[u].next("start_ack")
	}

	// The script's record: steps in order; follows[reader][author] the
	// steps at which the follow changed (sample: alice follows bob).
	type postLog struct {
		author             string
		published, deleted int // the steps (0: never)
	}
	step := 0
	posts := map[string]*postLog{}
	var order []string
	following := map[[2]string][]int{{"alice", "bob"}: {0}} // the steps at which the follow turned on or off, on first
	follows := func(r, a string) bool { return len(following[[2]string{r, a}])%2 == 1 }
	do := func(who, mutation string) map[string]any {
		t.Helper()
		step++
		r := post(t, url, devserver.Token(who), mutation)
		if len(r.Errors) > 0 {
			t.Fatalf("step %d (seed %d), %s: %s: %v", step, seed, who, mutation, r.Errors)
		}
		return r.Data
	}
	for range 60 {
		u := users[rng.IntN(len(users))]
		other := users[rng.IntN(len(users))]
		var mine []string
		for _, id := range order {
			if p := posts[id]; p.author == u && p.deleted == 0 {
				mine = append(mine, id)
			}
		}
		switch n := rng.IntN(10); {
		case n < 4: // a post, published or a draft
			draft := rng.IntN(3) == 0
			status := map[bool]string{true: "DRAFT", false: "PUBLISHED"}[draft]
			d := do(u, `mutation { createPost(input: {title: "t", body: "b", status: `+status+`}) { id } }`)
			id := d["createPost"].(map[string]any)["id"].(string)
			posts[id], order = &postLog{author: u}, append(order, id)
			if !draft {
				posts[id].published = step
			}
		case n < 5 && len(mine) > 0: // a draft published
			id := mine[rng.IntN(len(mine))]
			if posts[id].published == 0 {
				do(u, `mutation { publishPost(id: "`+id+`") { id } }`)
				posts[id].published = step
			}
		case n < 6 && len(mine) > 0: // a post deleted
			id := mine[rng.IntN(len(mine))]
			do(u, `mutation { deletePost(id: "`+id+`") { id } }`)
			posts[id].deleted = step
		case other != u && follows(u, other):
			do(u, `mutation { unfollow(userId: "u_`+other+`") { followerId } }`)
			following[[2]string{u, other}] = append(following[[2]string{u, other}], step)
		case other != u:
			do(u, `mutation { follow(userId: "u_`+other+`") { followerId } }`)
			following[[2]string{u, other}] = append(following[[2]string{u, other}], step)
		}
	}

	// followedAfter reports whether r followed a at some moment from step on;
	// followedThrough whether from before step to the end, unbroken.
	followedAfter := func(r, a string, from int) bool {
		changes := following[[2]string{r, a}]
		for i := range changes {
			on := i%2 == 0
			next := step + 1
			if i+1 < len(changes) {
				next = changes[i+1]
			}
			if on && next > from {
				return true
			}
		}
		return false
	}
	followedThrough := func(r, a string, from int) bool {
		changes := following[[2]string{r, a}]
		return len(changes)%2 == 1 && changes[len(changes)-1] < from
	}
	// Read each feed until what must arrive has (a minute at most: the
	// stream's delay, and the pushes after it), then a second more for
	// what must not.
	must := func(u, id string) bool {
		p := posts[id]
		return p.published > 0 && p.deleted == 0 && followedThrough(u, p.author, p.published)
	}
	got := map[string]map[string]int{}
	deliveries := 0
	deadline := time.Now().Add(time.Minute)
	for _, u := range users {
		got[u] = map[string]int{}
		waiting := 0
		for _, id := range order {
			if must(u, id) {
				waiting++
			}
		}
		for {
			wait := time.Second
			if waiting > 0 {
				wait = time.Until(deadline)
			}
			m, ok := feeds[u].within(wait)
			if !ok {
				break
			}
			if m.Type != "data" {
				t.Fatalf("%s's feed (seed %d): %+v %s", u, seed, m, m.Payload)
			}
			id := strings.Split(strings.SplitAfter(string(m.Payload), `"id":"`)[1], `"`)[0]
			got[u][id]++
			deliveries++
			if got[u][id] == 1 && must(u, id) {
				waiting--
			}
		}
	}
	if deliveries == 0 {
		t.Fatalf("seed %d: nothing was pushed", seed)
	}
	for _, u := range users {
		for _, id := range order {
			p, n := posts[id], got[u][id]
			switch {
			case n > 1:
				t.Errorf("seed %d: %s received %s %d times", seed, u, id, n)
			case n == 1 && (p.published == 0 || !followedAfter(u, p.author, p.published)):
				t.Errorf("seed %d: %s received %s (%s's, published at step %d), never following then", seed, u, id, p.author, p.published)
			case n == 0 && must(u, id):
				t.Errorf("seed %d: %s did not receive %s (%s's, published at step %d), following throughout", seed, u, id, p.author, p.published)
			}
		}
	}
	t.Logf("seed %d: %d steps, %d posts, %d deliveries", seed, step, len(order), deliveries)
}
