// Package smoke is the first-deploy check: what nobody can verify without a
// deployed API, run against one. It creates a user, a post and a comment as
// a signed-in caller, reads them back with the seed's query as an API-key
// caller, and runs a batched field in which one item fails, to see that
// AppSync turns the Lambda's {data, errorMessage, errorType} items into one
// GraphQL error for that item only. The largest comment tells how AppSync
// measures a subscription message (message.go). It then probes how AppSync
// writes the selection of a field a query selects more than once
// (reading.go), and fails when the function reads every occurrence's and
// AppSync writes less; last, a second user's feed receives a post of the
// first (feed.go), a subscription to the post's comments receives one, and
// the post's deletion ends it (live.go). It reports what it saw, plainly.
package smoke

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// Target is the API under test.
type Target struct {
	URL    string // the GraphQL endpoint
	APIKey string // sent as x-api-key on reads ("" for none, as make dev takes)
	Token  string // a signed-in user's token (Authorization), for the writes
	// Reader is a second signed-in user's token, who follows the first and
	// reads their feed ("" leaves the pushed feed unchecked).
	Reader string
	// Reading is how the API's resolver function reads a merged field's
	// selection (the stack's SelectionReading output): the check fails when
	// it reads every occurrence and AppSync does not write them all.
	Reading appsync.Reading
}

// response is a GraphQL response, as much of it as the checks read.
type response struct {
	Data   map[string]any `json:"data"`
	Errors []struct {
		Message   string `json:"message"`
		ErrorType string `json:"errorType"`
		Path      []any  `json:"path"`
	} `json:"errors"`
}

// Run runs the checks against t, writing what it saw to out. It returns an
// error when a check fails.
func Run(ctx context.Context, t Target, out io.Writer) error {
	var suffix [4]byte
	rand.Read(suffix[:])
	handle := "smoke_" + hex.EncodeToString(suffix[:])
	say := func(format string, args ...any) { fmt.Fprintf(out, format+"\n", args...) }

	created, err := post(ctx, t, true, `mutation($h: String!) { createUser(input: {handle: $h, name: "Smoke Test", email: "smoke@example.com"}) { id handle } }`,
		map[string]any{"h": handle})
	if err != nil || len(created.Errors) > 0 {
		return failed(say, "createUser as the signed-in user", created, err)
	}
	say("ok   createUser: %s", handle)
	p, err := post(ctx, t, true, `mutation { createPost(input: {title: "Smoke", body: "A post by the first-deploy check."}) { id } }`, nil)
	if err != nil || len(p.Errors) > 0 {
		return failed(say, "createPost", p, err)
	}
	postID, _ := dig(p.Data, "createPost", "id").(string)
	say("ok   createPost: %s", postID)
	c, err := post(ctx, t, true, `mutation($p: ID!) { createComment(input: {postId: $p, body: "First!"}) { id } }`, map[string]any{"p": postID})
	if err != nil || len(c.Errors) > 0 {
		return failed(say, "createComment", c, err)
	}
	say("ok   createComment on it")

	seed, err := post(ctx, t, false, `query($h: String) { user(handle: $h) { name posts { items { title comments { items { body author { name } } } } } } }`,
		map[string]any{"h": handle})
	body, _ := dig(seed.Data, "user", "posts", "items", 0, "comments", "items", 0, "body").(string)
	author, _ := dig(seed.Data, "user", "posts", "items", 0, "comments", "items", 0, "author", "name").(string)
	if err != nil || len(seed.Errors) > 0 || body != "First!" || author != "Smoke Test" {
		return failed(say, "the seed's query as an API-key caller", seed, err)
	}
	say("ok   the seed's query (API key) reads the post, its comment and the comment's author")

	// Two User.posts events in one batch; the first has a bad nextToken.
	batch, err := post(ctx, t, false, `query($h: String) {
	  bad: user(handle: $h) { posts(nextToken: "not-a-token") { items { title } } }
	  good: user(handle: $h) { posts { items { title } } } }`, map[string]any{"h": handle})
	title, _ := dig(batch.Data, "good", "posts", "items", 0, "title").(string)
	switch {
	case err != nil:
		return failed(say, "a batch with one failing item", batch, err)
	case len(batch.Errors) != 1 || batch.Errors[0].ErrorType != "InvalidNextToken" || title != "Smoke":
		return failed(say, "a batch with one failing item: want one InvalidNextToken error for bad.posts and good.posts served", batch, nil)
	}
	say("ok   a batched field with one failing item: that item's error is %s %q at %v, its sibling was served",
		batch.Errors[0].ErrorType, batch.Errors[0].Message, batch.Errors[0].Path)

	for _, check := range []func(context.Context, Target, string, func(string, ...any)) error{
		checkMessages,
		checkClientLimit,
		checkReading, // feature: probe
	} {
		if err := check(ctx, t, postID, say); err != nil {
			return err
		}
	}
	authorID, _ := dig(created.Data, "createUser", "id").(string)
	if err := checkFeed(ctx, t, authorID, handle, say); err != nil {
		return err
	}
	if err := checkLive(ctx, t, postID, say); err != nil {
		return err
	}
	say("all checks passed")
	return nil
}

func failed(say func(string, ...any), what string, r response, err error) error {
	if err != nil {
		say("FAIL %s: %v", what, err)
		return fmt.Errorf("%s: %w", what, err)
	}
	b, _ := json.Marshal(r)
	say("FAIL %s: the API answered %s", what, b)
	return fmt.Errorf("%s failed", what)
}

// post sends one GraphQL request, signed in or with the API key, with the
// given headers (name, value, ...).
func post(ctx context.Context, t Target, signedIn bool, query string, vars map[string]any, headers ...string) (response, error) {
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.URL, bytes.NewReader(body))
	if err != nil {
		return response{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	if signedIn {
		req.Header.Set("Authorization", t.Token)
	} else if t.APIKey != "" {
		req.Header.Set("x-api-key", t.APIKey)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return response{}, err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return response{}, err
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return response{}, fmt.Errorf("HTTP %d, not a GraphQL response: %.200s", resp.StatusCode, bytes.TrimSpace(raw))
	}
	return r, nil
}

// dig follows keys and indexes into decoded JSON.
func dig(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}
