// Package traffic builds Lambda payloads shaped like AppSync's traffic, for
// the benchmarks: every event carries the ~25 request headers AppSync
// forwards and a Cognito identity with its claims, and sources are what the
// parent resolvers return (posts with 600-character bodies).
package traffic

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Traffic shaped like AppSync's: every event carries the ~25 request headers
// AppSync forwards and a Cognito identity with its claims, and sources are
// what the parent resolvers return (posts with 600-character bodies).

var appsyncHeaders = map[string]string{
	"accept": "application/json, text/plain, */*", "accept-encoding": "gzip, deflate, br, zstd",
	"accept-language": "en-GB,en;q=0.9,en-US;q=0.8", "authorization": "eyJraWQiOiJrZXkiLCJhbGciOiJSUzI1NiJ9." + strings.Repeat("x", 700) + ".sig",
	"cloudfront-forwarded-proto": "https", "cloudfront-is-desktop-viewer": "true", "cloudfront-is-mobile-viewer": "false",
	"cloudfront-is-smarttv-viewer": "false", "cloudfront-is-tablet-viewer": "false", "cloudfront-viewer-asn": "16509",
	"cloudfront-viewer-country": "IE", "content-length": "214", "content-type": "application/json",
	"host": "abcdefghijklmnopqrstuvwxyz.appsync-api.eu-west-1.amazonaws.com", "origin": "https://app.example.com",
	"referer": "https://app.example.com/posts/01HWMMR280YFZMTH8Y8AF1G8GN", "sec-ch-ua": `"Chromium";v="124", "Google Chrome";v="124"`,
	"sec-ch-ua-mobile": "?0", "sec-ch-ua-platform": `"Linux"`, "sec-fetch-dest": "empty", "sec-fetch-mode": "cors",
	"user-agent":      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0.0.0 Safari/537.36",
	"via":             "2.0 0123456789abcdef0123456789abcdef.cloudfront.net (CloudFront)",
	"x-amz-cf-id":     "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789AbCdEfGhIjKlMnOpQr==",
	"x-amzn-trace-id": "Root=1-66300000-0123456789abcdef01234567", "x-forwarded-for": "203.0.113.24, 64.252.0.1",
	"x-forwarded-port": "443", "x-forwarded-proto": "https",
}

func cognitoIdentity() map[string]any {
	claims := map[string]any{"sub": "u_alice", "iss": "https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Ab12Cd34E",
		"cognito:username": "alice", "aud": "5q7example0client0id0abcd", "event_id": "8b1e3c1a-6a3b-4b8e-9d55-2f7a2c0e9b11",
		"token_use": "id", "auth_time": 1714381200, "exp": 1714384800, "iat": 1714381200, "email": "alice@example.com",
		"email_verified": true, "origin_jti": "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "jti": "1a2b3c4d-5e6f-7a8b-9c0d-e1f2a3b4c5d6"}
	return map[string]any{"claims": claims, "defaultAuthStrategy": "ALLOW", "groups": nil, "issuer": claims["iss"],
		"sourceIp": []string{"203.0.113.24"}, "sub": "u_alice", "username": "alice"}
}

// event is one event of field parent.field with source and the selection
// AppSync would send.
func event(parent, field string, args, source any, selection string, list ...string) map[string]any {
	return map[string]any{
		"arguments": args, "identity": cognitoIdentity(), "source": source, "prev": nil, "stash": map[string]any{},
		"request": map[string]any{"headers": appsyncHeaders, "domainName": nil},
		"info": map[string]any{"fieldName": field, "parentTypeName": parent, "variables": map[string]any{},
			"selectionSetList": list, "selectionSetGraphQL": selection},
	}
}

// Post is the i-th post of the traffic: a 600-character body, one of 30 authors.
func Post(i int) store.Post {
	return store.Post{ID: fmt.Sprintf("01HWP%021d", i), AuthorID: fmt.Sprintf("author%02d", i%30), Title: "Notes on single-table design",
		Body:      strings.Repeat("Single-table design keeps items that are read together in one partition. ", 9)[:600],
		CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z", CommentCount: 20}
}

// Comment is the i-th comment on the post-th post, by one of 30 authors.
func Comment(post, i int) store.Comment {
	return store.Comment{ID: fmt.Sprintf("01HWC%017d%04d", post, i), PostID: Post(post).ID, AuthorID: fmt.Sprintf("author%02d", i%30),
		Body: "Thanks, this helped me model my own table.", CreatedAt: "2024-05-01T00:00:00.000Z"}
}

// Users are the 30 authors the traffic's posts and comments name.
func Users() []store.User {
	users := make([]store.User, 30)
	for i := range users {
		email := fmt.Sprintf("author%02d@example.com", i)
		users[i] = store.User{ID: fmt.Sprintf("author%02d", i), Handle: fmt.Sprintf("author%02d", i), Name: fmt.Sprint("Author ", i),
			Email: &email, CreatedAt: "2024-05-01T00:00:00.000Z", PostCount: 4}
	}
	return users
}

// Store serves from memory what the traffic's fields read: Users by ID (as
// store.Store.Users reads them: absent IDs left out) and Post(0). The rest
// is a store.Store without a DynamoDB client: its prefetch functions make
// no request, anything else fails.
type Store struct {
	*store.Store
	users map[string]store.User
	post  store.Post // Post(0), made once
}

// NewStore returns the traffic's store.
func NewStore() Store {
	s := Store{Store: store.New(nil, "traffic", cursor.New([]byte("traffic"))), users: map[string]store.User{}, post: Post(0)}
	for _, u := range Users() {
		s.users[u.ID] = u
	}
	return s
}

// Users returns the users with the given IDs that exist, by ID.
func (s Store) Users(_ context.Context, ids []string, _ bool) (map[string]store.User, error) {
	out := make(map[string]store.User, len(ids))
	for _, id := range ids {
		if u, ok := s.users[id]; ok {
			out[id] = u
		}
	}
	return out, nil
}

// Post returns Post(0) for its ID.
func (s Store) Post(_ context.Context, id string) (store.Post, error) {
	if id != s.post.ID {
		return store.Post{}, errs.E("traffic.Post", errs.NotFound, "post not found")
	}
	return s.post, nil
}

// Case is one Lambda payload of the traffic.
type Case struct {
	Name    string
	Events  int
	Payload []byte
}

// Cases returns the payloads: 100-event batches of Post.author (sources
// are posts) and Comment.author (30 distinct authors), Post.comments served
// from a source carrying 20 comments, and a single Query.post.
func Cases() []Case {
	marshal := func(v any) []byte {
		b, err := json.Marshal(v)
		if err != nil {
			panic(err)
		}
		return b
	}
	userSel := "{\n  name\n}"
	var postAuthor, commentAuthor []map[string]any
	for i := range 100 {
		postAuthor = append(postAuthor, event("Post", "author", map[string]any{}, Post(i), userSel, "name"))
		commentAuthor = append(commentAuthor, event("Comment", "author", map[string]any{}, Comment(i/20, i%20), userSel, "name"))
	}
	comments := store.Prefetch[store.Comment]{Parent: Post(0).ID, Complete: true}
	for i := range 20 {
		comments.Items = append(comments.Items, Comment(0, i))
	}
	withComments := map[string]any{}
	json.Unmarshal(marshal(Post(0)), &withComments)
	withComments["prefetchedComments"] = comments
	postComments := event("Post", "comments", map[string]any{}, withComments,
		"{\n  items {\n    body\n    author {\n      name\n    }\n  }\n}", "items", "items/body", "items/author", "items/author/name")
	queryPost := event("Query", "post", map[string]any{"id": Post(0).ID}, nil,
		"{\n  title\n  body\n  author {\n    name\n  }\n}", "title", "body", "author", "author/name")
	return []Case{
		{"Post.author/100", 100, marshal(postAuthor)},
		{"Comment.author/100", 100, marshal(commentAuthor)},
		{"Post.comments/20-from-source", 1, marshal([]any{postComments})},
		{"Query.post", 1, marshal(queryPost)},
	}
}

// CommentsQuery is a Post.comments event whose source carries no comments:
// its page is one Query of the post's partition (Post(0)'s 20 comments,
// Comment(0, i), which the table must hold), its items' ids and bodies
// selected.
func CommentsQuery() Case {
	source := map[string]any{}
	b, _ := json.Marshal(Post(0))
	json.Unmarshal(b, &source)
	ev := event("Post", "comments", map[string]any{}, source, "{\n  items {\n    id\n    body\n  }\n}", "items", "items/id", "items/body")
	payload, err := json.Marshal([]any{ev})
	if err != nil {
		panic(err)
	}
	return Case{"Post.comments/20-a-Query", 1, payload}
}
