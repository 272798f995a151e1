package appsync_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

const single = `{
  "arguments": {"id": "u_alice"},
  "identity": {"sub": "u_alice", "issuer": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_x", "username": "alice",
               "claims": {"sub": "u_alice"}, "sourceIp": ["203.0.113.7"], "defaultAuthStrategy": "ALLOW", "groups": null},
  "source": null,
  "request": {"headers": {"x-forwarded-for": "203.0.113.7", "x-multi": ["a", "b"]}, "domainName": null},
  "prev": null,
  "info": {"fieldName": "user", "parentTypeName": "Query", "variables": {},
           "selectionSetList": ["id", "posts", "posts/items", "posts/items/title", "p2", "p2/items"],
           "selectionSetGraphQL": "{\n  id\n  posts {\n    items {\n      title\n    }\n  }\n}"},
  "stash": {}
}`

func TestDecodeSingle(t *testing.T) {
	evs, batch, err := appsync.Decode([]byte(" \n" + single))
	if err != nil || batch || len(evs) != 1 {
		t.Fatalf("Decode = %d events, batch %v, err %v", len(evs), batch, err)
	}
	ev := evs[0]
	if ev.Info.Field() != "Query.user" || ev.Identity.UserID() != "u_alice" || string(ev.Source) != "null" {
		t.Errorf("decoded %+v", ev)
	}
	if !ev.Info.Selects("posts/items/title") || ev.Info.Selects("title") {
		t.Error("Selects is wrong")
	}
	if got := ev.Info.Children(""); !slices.Equal(got, []string{"id", "posts", "p2"}) {
		t.Errorf("Children(\"\") = %v", got)
	}
	if got := ev.Info.Children("posts/items"); !slices.Equal(got, []string{"title"}) {
		t.Errorf("Children(posts/items) = %v", got)
	}
}

func TestDecodeBatch(t *testing.T) {
	evs, batch, err := appsync.Decode([]byte("[" + single + "," + single + "]"))
	if err != nil || !batch || len(evs) != 2 {
		t.Fatalf("Decode = %d events, batch %v, err %v", len(evs), batch, err)
	}
	evs, batch, err = appsync.Decode([]byte("[]"))
	if err != nil || !batch || len(evs) != 0 {
		t.Fatalf("empty batch: %d events, batch %v, err %v", len(evs), batch, err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, p := range []string{"", "   ", "nul", "{", "[{]", `"text"`, `{"info": 5}`} {
		if _, _, err := appsync.Decode([]byte(p)); !errors.Is(err, appsync.ErrMalformed) {
			t.Errorf("Decode(%q) err = %v, want ErrMalformed", p, err)
		}
	}
}

func TestIdentityUserID(t *testing.T) {
	var apiKey *appsync.Identity
	cases := map[string]struct {
		id   *appsync.Identity
		want string
	}{
		"api key": {apiKey, ""},
		"cognito": {&appsync.Identity{Sub: "s1", Username: "alice"}, "s1"},
		"iam":     {&appsync.Identity{AccountID: "123", UserArn: "arn:aws:iam::123:user/x"}, ""},
		"lambda":  {&appsync.Identity{ResolverContext: map[string]string{"userId": "u9"}}, "u9"},
	}
	for name, c := range cases {
		if got := c.id.UserID(); got != c.want {
			t.Errorf("%s: UserID = %q, want %q", name, got, c.want)
		}
	}
}
