package jsresolver_test

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/local/jsresolver"
)

func child(t *testing.T) *jsresolver.Resolver {
	t.Helper()
	r, err := jsresolver.Load("appsyncjs/child.js", appsyncjs.Child)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func postCtx(source map[string]any, args map[string]any) jsresolver.Context {
	return jsresolver.Context{
		Arguments: args,
		Source:    source,
		Identity:  map[string]any{"sub": "u_alice", "claims": map[string]any{"email": "a@example.com"}},
		Request:   map[string]any{"headers": map[string]any{"x-big": strings.Repeat("h", 1000)}},
		Info: jsresolver.Info{FieldName: "comments", ParentTypeName: "Post", SelectionSetGraphQL: "{\n  items {\n    id\n  }\n}",
			SelectionSetList: []string{"items", "items/id"}, Variables: []byte(`{"n":2}`)},
	}
}

// With the answer for exactly these arguments on the source, the request
// handler returns it early.
func TestChildReturnsTheParentsAnswerEarly(t *testing.T) {
	page := map[string]any{"items": []any{map[string]any{"id": "c1"}}, "nextToken": nil}
	source := map[string]any{"id": "p1", "_defaults": map[string]any{"comments": map[string]any{"order": "OLDEST_FIRST"}}, "_answers": map[string]any{
		"comments|limit=2":               page,
		"comments":                       map[string]any{"items": []any{}},
		`comments|limit=2|nextToken="x"`: "not this one",
		"author":                         map[string]any{"id": "u_bob"},
	}}
	r := child(t)
	for _, tc := range []struct {
		args map[string]any
		want any
	}{
		{map[string]any{"limit": 2}, page},
		{map[string]any{"limit": 2, "nextToken": nil}, page}, // null arguments are left out of the key
		{map[string]any{}, map[string]any{"items": []any{}}},
		// An argument equal to its default (AppSync may fill it in) is left out too.
		{map[string]any{"limit": 2, "order": "OLDEST_FIRST"}, page},
	} {
		req, err := r.Request(postCtx(source, tc.args))
		if err != nil {
			t.Fatal(err)
		}
		if !req.Early || !reflect.DeepEqual(req.Value, tc.want) {
			t.Errorf("args %v: %+v, want early %v", tc.args, req, tc.want)
		}
	}
}

// Without an answer, it invokes the Lambda with the event a direct resolver
// sends, less the headers, the selection list, the identity's claims and
// the answers on the source.
func TestChildInvokesTheLambdaWithoutAnAnswer(t *testing.T) {
	source := map[string]any{"id": "p1", "authorId": "u_alice", "_answers": map[string]any{"comments|limit=5": map[string]any{}},
		"_defaults": map[string]any{"comments": map[string]any{"order": "OLDEST_FIRST"}}}
	req, err := child(t).Request(postCtx(source, map[string]any{"limit": float64(2)}))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"arguments": map[string]any{"limit": float64(2)},
		"identity":  map[string]any{"sub": "u_alice"},
		"source":    map[string]any{"id": "p1", "authorId": "u_alice"},
		"info": map[string]any{"parentTypeName": "Post", "fieldName": "comments",
			"selectionSetGraphQL": "{\n  items {\n    id\n  }\n}", "variables": map[string]any{}},
	}
	if req.Early || req.Operation != "BatchInvoke" || !reflect.DeepEqual(req.Payload, want) {
		t.Errorf("request = %+v\nwant BatchInvoke of %v", req, want)
	}
	// The variables go along when the selection names one.
	withVar := postCtx(source, nil)
	withVar.Info.SelectionSetGraphQL = "{\n  items {\n    replies(limit: $n)\n  }\n}"
	req, err = child(t).Request(withVar)
	if info := req.Payload.(map[string]any)["info"].(map[string]any); err != nil || !reflect.DeepEqual(info["variables"], map[string]any{"n": float64(2)}) {
		t.Errorf("a selection naming $n: info %v, %v", info, err)
	}
	// Only the variables it names: a large unrelated one stays behind.
	withVar.Info.Variables = []byte(`{"n":2,"big":"` + strings.Repeat("x", 5000) + `","nn":3}`)
	req, err = child(t).Request(withVar)
	if info := req.Payload.(map[string]any)["info"].(map[string]any); err != nil || !reflect.DeepEqual(info["variables"], map[string]any{"n": float64(2)}) ||
		info["selectionSetGraphQL"] == "" {
		t.Errorf("a selection naming $n beside unrelated variables: info %v, %v", info, err)
	}
	// The limit is MAX_SELECTION code units of selection and named
	// variables: 1,000 with none named is sent, 1,001 is not.
	for _, tc := range []struct {
		units int
		sent  bool
	}{{999, true}, {1000, true}, {1001, false}} {
		long := postCtx(source, nil)
		long.Info.SelectionSetGraphQL = "{ id " + strings.Repeat("é", tc.units-7) + " }"
		req, err = child(t).Request(long)
		if text := req.Payload.(map[string]any)["info"].(map[string]any)["selectionSetGraphQL"]; err != nil || (text != "") != tc.sent {
			t.Errorf("a selection of %d units: sent %v, want %v (%v)", tc.units, text != "", tc.sent, err)
		}
	}
	noSource := postCtx(nil, nil)
	noSource.Identity = nil
	req, err = child(t).Request(noSource)
	if err != nil || req.Early || req.Payload.(map[string]any)["identity"] != nil {
		t.Errorf("API-key caller, no source: %+v, %v", req, err)
	}
}

// The response handler unwraps the Lambda's item, and turns an item's error
// and an invocation's error into the GraphQL error util.error raises.
func TestChildResponse(t *testing.T) {
	r := child(t)
	ctx := postCtx(nil, nil)
	ctx.Result = map[string]any{"data": map[string]any{"id": "u_bob"}}
	if v, _, err := r.Response(ctx); err != nil || !reflect.DeepEqual(v, map[string]any{"id": "u_bob"}) {
		t.Errorf("data item: %v, %v", v, err)
	}
	ctx.Result = map[string]any{"data": nil, "errorMessage": "author not found", "errorType": "NotFound"}
	var gqlErr *jsresolver.Error
	if _, _, err := r.Response(ctx); !errors.As(err, &gqlErr) || gqlErr.Message != "author not found" || gqlErr.Type != "NotFound" {
		t.Errorf("error item: %v", err)
	}
	ctx.Result, ctx.Error = nil, &jsresolver.SourceErr{Message: "Task timed out after 10.00 seconds", Type: "Lambda:Unhandled"}
	if _, _, err := r.Response(ctx); !errors.As(err, &gqlErr) || gqlErr.Type != "Lambda:Unhandled" {
		t.Errorf("invocation error: %v", err)
	}
}

// What the runtime does not offer fails loudly.
func TestLoadRefusesWhatIsNotThere(t *testing.T) {
	if _, err := jsresolver.Load("x.js", `import { x } from 'lodash'; export function request() {} export function response() {}`); err == nil {
		t.Error("an import other than @aws-appsync/utils loaded")
	}
	if _, err := jsresolver.Load("x.js", `export function request() {}`); err == nil {
		t.Error("a file without response loaded")
	}
	if _, err := jsresolver.Load("x.js", `export function request( {`); err == nil {
		t.Error("a syntax error loaded")
	}
}

// A response handler's extensions calls come back to Go, the last filter
// of each kind and every invalidation in order; a request handler may not
// call them (AppSync offers them to response handlers only).
func TestExtensionsComeBackFromTheResponseHandler(t *testing.T) {
	r, err := jsresolver.Load("extensions.js", `import { extensions } from '@aws-appsync/utils';
export function request(ctx) {
  if (ctx.args.inRequest) extensions.setSubscriptionFilter({ filterGroup: [] });
  return {};
}
export function response(ctx) {
  extensions.setSubscriptionFilter({ filterGroup: [{ filters: [{ fieldName: 'a', operator: 'eq', value: 1 }] }] });
  extensions.setSubscriptionFilter({ filterGroup: [{ filters: [{ fieldName: 'postId', operator: 'eq', value: ctx.args.postId }] }] });
  extensions.setSubscriptionInvalidationFilter({ filterGroup: [{ filters: [{ fieldName: 'id', operator: 'eq', value: ctx.args.postId }] }] });
  extensions.invalidateSubscriptions({ subscriptionField: 'onCreateComment', payload: { postId: ctx.args.postId } });
  extensions.invalidateSubscriptions({ subscriptionField: 'onPostActivity', payload: { id: ctx.args.postId } });
  return null;
}`)
	if err != nil {
		t.Fatal(err)
	}
	ctx := jsresolver.Context{Arguments: map[string]any{"postId": "p1"}}
	_, ext, err := r.Response(ctx)
	if err != nil {
		t.Fatal(err)
	}
	eq := func(field string) any {
		return map[string]any{"filterGroup": []any{map[string]any{"filters": []any{map[string]any{"fieldName": field, "operator": "eq", "value": "p1"}}}}}
	}
	want := jsresolver.Extensions{SubscriptionFilter: eq("postId"), InvalidationFilter: eq("id"), Invalidations: []jsresolver.Invalidation{
		{SubscriptionField: "onCreateComment", Payload: map[string]any{"postId": "p1"}},
		{SubscriptionField: "onPostActivity", Payload: map[string]any{"id": "p1"}},
	}}
	if !reflect.DeepEqual(ext, want) {
		t.Errorf("extensions %+v, want %+v", ext, want)
	}
	if _, err := r.Request(jsresolver.Context{Arguments: map[string]any{"inRequest": true}}); err == nil || !strings.Contains(err.Error(), "response handlers") {
		t.Errorf("a request handler's extensions call: %v, want refused", err)
	}
}
