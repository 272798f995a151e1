package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// ev builds an event for parent.field with the given arguments and source.
func ev(parent, field string, args, source any, selection ...string) appsync.Event {
	e := appsync.Event{Info: appsync.Info{ParentTypeName: parent, FieldName: field}}
	e.Info.SelectionSetList, _ = json.Marshal(selection)
	if args != nil {
		e.Arguments, _ = json.Marshal(args)
	}
	if source != nil {
		e.Source, _ = json.Marshal(source)
	}
	return e
}

func TestEveryRouteHasAResolver(t *testing.T) {
	// New panics when the routes and the resolvers differ.
	h := resolver.New(store.New(nil, "unused", cursor.New(nil)), slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard))
	if h == nil {
		t.Fatal("New returned nil")
	}
	if len(h.Routes().All()) != len(resolver.CoreRoutes) {
		t.Fatalf("the handler routes %d fields, the core %d", len(h.Routes().All()), len(resolver.CoreRoutes))
	}
}

// A feature's field is routed beside the core's; a field routed without a
// resolver, or twice, is a panic in New (a build error the tests catch).
func TestAFeatureIsRoutedBesideTheCore(t *testing.T) {
	s, log := store.New(nil, "unused", cursor.New(nil)), slog.New(slog.NewJSONHandler(io.Discard, nil))
	hello := resolver.Feature{Routes: []resolver.Route{{Type: "Query", Field: "hello"}},
		Fields: map[string]resolver.Field{"Query.hello": resolver.Each(func(context.Context, *appsync.Event, struct{}) (any, error) { return "hi", nil })}}
	h := resolver.New(s, log, resolver.WithCostLog(io.Discard), resolver.WithFeature(hello))
	if _, ok := h.Routes().Find("Query.hello"); !ok || len(h.Routes().All()) != len(resolver.CoreRoutes)+1 {
		t.Errorf("the feature's field is not routed: %d routes", len(h.Routes().All()))
	}
	out, err := h.Invoke(t.Context(), []byte(`{"info":{"parentTypeName":"Query","fieldName":"hello"}}`))
	if err != nil || string(out) != `"hi"` {
		t.Errorf("Query.hello: %s, %v", out, err)
	}
	for name, f := range map[string]resolver.Feature{
		"a route without a resolver": {Routes: []resolver.Route{{Type: "Query", Field: "hello"}}},
		"a resolver without a route": {Fields: hello.Fields},
		"a field routed twice":       {Routes: []resolver.Route{{Type: "Query", Field: "post"}}, Fields: map[string]resolver.Field{"Query.post": hello.Fields["Query.hello"]}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			resolver.New(s, log, resolver.WithCostLog(io.Discard), resolver.WithFeature(f))
		}()
	}
}

func TestPostAuthorBatchIsOneBatchGetItem(t *testing.T) {
	d := sample.Data()
	for i := range 30 {
		d.Users = append(d.Users, store.User{ID: fmt.Sprintf("author%02d", i), Handle: fmt.Sprintf("author%02d", i), Name: "A", CreatedAt: "2024-05-01T00:00:00.000Z",
			FollowerCount: i})
	}
	h := newHandler(t, d)
	batch := make([]appsync.Event, 50)
	for i := range batch {
		batch[i] = withSelection(ev("Post", "author", nil, store.Post{ID: fmt.Sprintf("p%02d", i), AuthorID: fmt.Sprintf("author%02d", i%30)}),
			"{\n  id\n  handle\n}", "id", "handle")
	}
	out, ierr, m := invoke(t, h, mustJSON(t, batch))
	if ierr != nil {
		t.Fatal(ierr)
	}
	calls := m.Calls()
	if len(calls) != 1 || calls[0].Operation != "BatchGetItem" || calls[0].Keys != 30 {
		t.Errorf("calls = %+v, want one BatchGetItem with 30 keys", calls)
	}
	var items []struct{ Data store.User }
	if err := json.Unmarshal(out, &items); err != nil || len(items) != 50 {
		t.Fatalf("reply: %d items, %v", len(items), err)
	}
	for i, it := range items {
		if want := fmt.Sprintf("author%02d", i%30); it.Data.ID != want {
			t.Errorf("item %d author = %q, want %q", i, it.Data.ID, want)
		}
	}
	if strings.Contains(string(out), "followerCount") {
		t.Errorf("counts not read, and yet encoded: %.300s", out)
	}

	// One event selecting a count: every author's counter is read, in the same request.
	batch[7] = withSelection(batch[7], "{\n  id\n  followerCount\n}", "id", "followerCount")
	out, ierr, m = invoke(t, h, mustJSON(t, batch))
	if ierr != nil {
		t.Fatal(ierr)
	}
	if calls := m.Calls(); len(calls) != 1 || calls[0].Operation != "BatchGetItem" || calls[0].Keys != 60 {
		t.Errorf("with a count: calls = %+v, want one BatchGetItem with 60 keys", calls)
	}
	items = nil
	if err := json.Unmarshal(out, &items); err != nil || len(items) != 50 || items[7].Data.FollowerCount != 7 {
		t.Fatalf("reply: %d items, %v; the 8th: %+v", len(items), err, items[7])
	}

	// A count under an alias, an inline fragment, or a named fragment's spread
	// (whose fields the text does not show): the counters are read too.
	for _, sel := range []string{"{\n  id\n  n: followerCount\n}", "{\n  id\n  ... on User {\n    postCount\n  }\n}", "{\n  id\n  ...UserFields\n}"} {
		batch[7] = withSelection(batch[7], sel, "id")
		_, ierr, m = invoke(t, h, mustJSON(t, batch))
		if ierr != nil {
			t.Fatal(ierr)
		}
		if calls := m.Calls(); len(calls) != 1 || calls[0].Keys != 60 {
			t.Errorf("selection %q: calls = %+v, want one BatchGetItem of the users and their counters (60 keys)", sel, calls)
		}
	}
}

func TestQueryPostsKeepsOrderAndLimits(t *testing.T) {
	h := sampleHandler(t)
	ids := []string{"01HWZZZZZZZZZZZZZZZZZZZZZZ", sample.HelloPost}
	out, ierr, _ := invoke(t, h, mustJSON(t, ev("Query", "posts", map[string]any{"ids": ids}, nil)))
	if ierr != nil {
		t.Fatal(ierr)
	}
	var posts []*store.Post
	if err := json.Unmarshal(out, &posts); err != nil || len(posts) != 2 || posts[0] != nil || posts[1].ID != sample.HelloPost {
		t.Errorf("posts = %s (%v)", out, err)
	}
	many := make([]string, 101)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	_, ierr, m := invoke(t, h, mustJSON(t, ev("Query", "posts", map[string]any{"ids": many}, nil)))
	if ierr == nil || ierr.Type != "ValidationError" || m.Total() != 0 {
		t.Errorf("101 ids: err %v, %d calls; want ValidationError and no call", ierr, m.Total())
	}
}

func TestErrorTypes(t *testing.T) {
	h := sampleHandler(t)
	alice := store.User{ID: sample.Alice}
	hello := store.Post{ID: sample.HelloPost, AuthorID: sample.Alice}

	first, ierr, _ := invoke(t, h, mustJSON(t, ev("Post", "comments", map[string]any{"limit": 1}, hello)))
	if ierr != nil {
		t.Fatal(ierr)
	}
	var page struct{ NextToken string }
	json.Unmarshal(first, &page)
	if page.NextToken == "" {
		t.Fatal("no nextToken on a one-item page of two comments")
	}
	tampered := strings.Replace(page.NextToken, page.NextToken[:4], "eyJz", 1)

	cases := []struct {
		name    string
		payload any
		want    string
	}{
		{"limit 0", ev("Post", "comments", map[string]any{"limit": 0}, hello), "ValidationError"},
		{"limit 101", ev("Post", "comments", map[string]any{"limit": 101}, hello), "ValidationError"},
		{"limit not an integer", ev("User", "posts", map[string]any{"limit": 2.5}, alice), "ValidationError"},
		{"tampered nextToken", ev("Post", "comments", map[string]any{"nextToken": tampered}, hello), "InvalidNextToken"},
		{"garbage nextToken", ev("User", "followers", map[string]any{"nextToken": "abc"}, alice), "InvalidNextToken"},
		{"nextToken of another field", ev("User", "comments", map[string]any{"nextToken": page.NextToken}, alice), "InvalidNextToken"},
		{"nextToken of another parent", ev("Post", "comments", map[string]any{"nextToken": page.NextToken}, store.Post{ID: "01HWOTHER"}), "InvalidNextToken"},
		{"id with #", ev("Query", "user", map[string]any{"id": "u_alice#METADATA"}, nil), "ValidationError"},
		{"post id with #", ev("Query", "post", map[string]any{"id": "x#y"}, nil), "ValidationError"},
		{"handle with #", ev("Query", "user", map[string]any{"handle": "HANDLE#alice"}, nil), "ValidationError"},
		{"user with both arguments", ev("Query", "user", map[string]any{"id": sample.Alice, "handle": "alice"}, nil), "ValidationError"},
		{"user with neither argument", ev("Query", "user", map[string]any{}, nil), "ValidationError"},
		{"unknown field", ev("Post", "reposts", nil, hello), "ValidationError"},
		{"me without identity", ev("Query", "me", nil, nil), "Unauthorized"},
		{"arguments of the wrong type", ev("Query", "posts", map[string]any{"ids": "not-a-list"}, nil), "ValidationError"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, ierr, m := invoke(t, h, mustJSON(t, c.payload))
			if ierr == nil {
				t.Fatalf("reply %s, want %s", out, c.want)
			}
			if ierr.Type != c.want {
				t.Errorf("errorType = %s (%s), want %s", ierr.Type, ierr.Message, c.want)
			}
			if ierr.Message == "" || ierr.Message == "internal error" {
				t.Errorf("message %q does not say what is wrong", ierr.Message)
			}
			if c.want != "InvalidNextToken" && m.Total() != 0 {
				t.Errorf("%d DynamoDB calls for a refused request", m.Total())
			}
		})
	}
}

func TestMalformedPayload(t *testing.T) {
	h := sampleHandler(t)
	for _, p := range []string{`{"info":`, `[1,2]`, ``} {
		_, ierr, _ := invoke(t, h, []byte(p))
		if ierr == nil || ierr.Type != "ValidationError" {
			t.Errorf("payload %q: error %+v, want ValidationError", p, ierr)
		}
	}
}

func TestBatchWithOneBadItem(t *testing.T) {
	h := sampleHandler(t)
	hello := store.Post{ID: sample.HelloPost, AuthorID: sample.Alice}
	batch := []appsync.Event{
		ev("Post", "comments", map[string]any{"limit": 1}, hello),
		ev("Post", "comments", map[string]any{"limit": 0}, hello),
		ev("Post", "comments", nil, hello),
	}
	out, ierr, _ := invoke(t, h, mustJSON(t, batch))
	if ierr != nil {
		t.Fatal(ierr)
	}
	var items []appsync.BatchItem
	if err := json.Unmarshal(out, &items); err != nil || len(items) != 3 {
		t.Fatalf("reply %s (%v)", out, err)
	}
	if items[0].ErrorType != "" || items[2].ErrorType != "" || items[0].Data == nil || items[2].Data == nil {
		t.Errorf("good items failed: %s", out)
	}
	if items[1].ErrorType != "ValidationError" || items[1].Data != nil || !strings.Contains(string(out), `"data":null`) {
		t.Errorf("bad item: %+v", items[1])
	}

	// A bad ID on one parent of a lookup batch fails that parent only.
	authors := []appsync.Event{
		ev("Post", "author", nil, hello),
		ev("Post", "author", nil, store.Post{ID: "p2", AuthorID: "bad#id"}),
		ev("Post", "author", nil, store.Post{ID: "p3", AuthorID: "u_gone"}),
	}
	out, ierr, m := invoke(t, h, mustJSON(t, authors))
	if ierr != nil {
		t.Fatal(ierr)
	}
	items = nil
	json.Unmarshal(out, &items)
	if len(items) != 3 || items[0].ErrorType != "" || items[1].ErrorType != "ValidationError" || items[2].ErrorType != "NotFound" {
		t.Errorf("reply %s", out)
	}
	if m.Count("BatchGetItem") != 1 {
		t.Errorf("calls %+v, want one BatchGetItem", m.Calls())
	}
}

func TestEmailOnlyForItsOwner(t *testing.T) {
	h := sampleHandler(t)
	query := ev("Query", "user", map[string]any{"id": sample.Alice}, nil, "id", "email")
	cases := []struct {
		name     string
		identity *appsync.Identity
		want     bool
	}{
		{"api key", nil, false},
		{"someone else", &appsync.Identity{Sub: sample.Bob, Username: "bob"}, false},
		{"the owner", &appsync.Identity{Sub: sample.Alice, Username: "alice"}, true},
		{"owner via Lambda authorizer", &appsync.Identity{ResolverContext: map[string]string{"userId": sample.Alice}}, true},
	}
	for _, c := range cases {
		query.Identity = c.identity
		out, ierr, _ := invoke(t, h, mustJSON(t, query))
		if ierr != nil {
			t.Fatal(ierr)
		}
		var u store.User
		json.Unmarshal(out, &u)
		if got := u.Email != nil; got != c.want {
			t.Errorf("%s: email shown = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestFollowConnectionsFetchUsersOnlyWhenNeeded(t *testing.T) {
	h := sampleHandler(t)
	alice := store.User{ID: sample.Alice}
	_, _, m := invoke(t, h, mustJSON(t, withSelection(ev("User", "following", nil, alice), "{ items { id } nextToken }",
		"items", "items/id", "nextToken")))
	if m.Count("Query") != 1 || m.Count("BatchGetItem") != 0 {
		t.Errorf("ids only: calls %+v, want one Query", m.Calls())
	}
	out, _, m := invoke(t, h, mustJSON(t, withSelection(ev("User", "following", nil, alice), "{ items { id handle } }",
		"items", "items/id", "items/handle")))
	if m.Count("Query") != 1 || m.Count("BatchGetItem") != 1 || !strings.Contains(string(out), `"handle":"bob"`) {
		t.Errorf("handles: calls %+v, reply %s", m.Calls(), out)
	}
	// selectionSetList shows aliases in place of names: "id: handle" reads
	// handles, and "it: items" is still the items.
	aliases := map[string]appsync.Event{
		"id: handle": withSelection(ev("User", "following", nil, alice), "{ items { id: handle } }", "items", "items/id"),
		"it: items":  withSelection(ev("User", "following", nil, alice), "{ it: items { handle } }", "it", "it/handle"),
		"no text":    ev("User", "following", nil, alice, "items", "items/id"),
	}
	for name, e := range aliases {
		out, ierr, _ := invoke(t, h, mustJSON(t, e))
		if ierr != nil || !strings.Contains(string(out), `"handle":"bob"`) {
			t.Errorf("%s: reply %s, error %v; want bob's whole profile", name, out, ierr)
		}
	}
}

func TestInternalErrorsAreNotShown(t *testing.T) {
	client := storetest.Client(t)
	s := store.New(client, "no-such-table", cursor.New(storetest.TokenKey))
	h := lambda.NewHandler(resolver.New(s, quietLog(), resolver.WithCostLog(io.Discard)))
	_, ierr, _ := invoke(t, h, mustJSON(t, ev("Query", "post", map[string]any{"id": sample.HelloPost}, nil)))
	if ierr == nil || ierr.Type != "InternalError" || ierr.Message != "internal error" {
		t.Errorf("error = %+v, want InternalError with no detail", ierr)
	}
}

func TestCostLineInEmbeddedMetricFormat(t *testing.T) {
	s, _ := storetest.NewStore(t, sample.Data())
	var buf strings.Builder
	h := lambda.NewHandler(resolver.New(s, quietLog(), resolver.WithCostLog(&buf)))
	batch := []appsync.Event{
		ev("Post", "author", nil, store.Post{ID: "p1", AuthorID: sample.Alice}),
		ev("Post", "author", nil, store.Post{ID: "p2", AuthorID: sample.Bob}),
	}
	if _, ierr, _ := invoke(t, h, mustJSON(t, batch)); ierr != nil {
		t.Fatal(ierr)
	}
	lines, err := resolver.ReadCostLines(buf.String())
	if err != nil || len(lines) != 1 {
		t.Fatalf("log is not one cost line: %v\n%s", err, buf.String())
	}
	line := lines[0]
	if line.Field != "Post.author" || line.BatchSize != 2 || line.DynamoDBRequests != 1 || line.Requests["BatchGetItem"] != 1 ||
		line.ReadCapacityUnits <= 0 || line.AWS.Timestamp == 0 {
		t.Errorf("cost line = %+v", line)
	}
	metrics := line.AWS.CloudWatchMetrics
	if len(metrics) != 1 || metrics[0].Namespace == "" || len(metrics[0].Metrics) != 5 || metrics[0].Dimensions[0][0] != "Field" {
		t.Errorf("EMF metadata = %+v", metrics)
	}
}

func TestCostLineNamesItsStackRequestAndColdStart(t *testing.T) {
	s, _ := storetest.NewStore(t, sample.Data())
	var buf strings.Builder
	h := lambda.NewHandler(resolver.New(s, quietLog(), resolver.WithCostLog(&buf), resolver.WithMetricsNamespace("MyStack")))
	for i, payload := range [][]byte{mustJSON(t, ev("Query", "user", map[string]string{"id": sample.Alice}, nil)), []byte(`{"info":5}`)} {
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: fmt.Sprint("req-", i)})
		h.Invoke(ctx, payload)
	}
	lines, err := resolver.ReadCostLines(buf.String())
	if err != nil || len(lines) != 2 {
		t.Fatalf("%d cost lines (%v) in\n%s", len(lines), err, buf.String())
	}
	first, second := lines[0], lines[1]
	if first.RequestID != "req-0" || !first.ColdStart || first.Field != "Query.user" || first.AWS.CloudWatchMetrics[0].Namespace != "MyStack" {
		t.Errorf("first invocation's line: %+v", first)
	}
	if second.RequestID != "req-1" || second.ColdStart || second.Field == "" {
		t.Errorf("a malformed payload's line: %+v (the Field dimension must not be empty)", second)
	}
}
