package cursor_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

var (
	scope = cursor.Scope{Query: "User.posts", Parent: "u_alice", Index: "GSI1"}
	key   = map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: "POST#01HW"}, "sk": &types.AttributeValueMemberS{Value: "#METADATA"},
		"gsi1pk": &types.AttributeValueMemberS{Value: "USER#u_alice"}, "gsi1sk": &types.AttributeValueMemberS{Value: "POST#01HW"},
	}
)

func TestRoundTrip(t *testing.T) {
	c := cursor.New([]byte("k1"))
	token, err := c.Encode(scope, key)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(token, "#") || strings.ContainsAny(token, "+/=") {
		t.Errorf("token %q is not URL-safe", token)
	}
	got, err := c.Decode(scope, token)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(key) {
		t.Fatalf("decoded %d attributes, want %d", len(got), len(key))
	}
	for name, v := range key {
		if got[name].(*types.AttributeValueMemberS).Value != v.(*types.AttributeValueMemberS).Value {
			t.Errorf("%s = %v, want %v", name, got[name], v)
		}
	}
}

func TestRejects(t *testing.T) {
	c := cursor.New([]byte("k1"))
	token, _ := c.Encode(scope, key)
	body, mac, _ := strings.Cut(token, ".")
	flip := func(s string, i int) string {
		b := []byte(s)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		return string(b)
	}
	cases := map[string]struct {
		codec *cursor.Codec
		scope cursor.Scope
		token string
	}{
		"other key":    {cursor.New([]byte("k2")), scope, token},
		"other query":  {c, cursor.Scope{Query: "User.comments", Parent: "u_alice", Index: "GSI1"}, token},
		"other parent": {c, cursor.Scope{Query: "User.posts", Parent: "u_bob", Index: "GSI1"}, token},
		"other index":  {c, cursor.Scope{Query: "User.posts", Parent: "u_alice"}, token},
		"other args":   {c, cursor.Scope{Query: "User.posts", Parent: "u_alice", Index: "GSI1", Args: "order=OLDEST_FIRST"}, token},
		"body changed": {c, scope, flip(body, 5) + "." + mac},
		"mac changed":  {c, scope, body + "." + flip(mac, 2)},
		"no mac":       {c, scope, body},
		"empty":        {c, scope, ""},
		"not base64":   {c, scope, "!!!.???"},
	}
	for name, tc := range cases {
		if _, err := tc.codec.Decode(tc.scope, tc.token); !errs.Is(err, errs.InvalidNextToken) {
			t.Errorf("%s: err = %v, want InvalidNextToken", name, err)
		}
	}
}

// A deferred key is loaded on first use, once; a load that fails fails that
// call with an Internal error (never an unsigned or unchecked token) and the
// next call loads again.
func TestDeferredKey(t *testing.T) {
	loads := 0
	c := cursor.Deferred(func() ([]byte, error) {
		loads++
		if loads <= 2 {
			return nil, errors.New("Secrets Manager did not answer")
		}
		return []byte("k"), nil
	})
	scope := cursor.Scope{Query: "Post.comments", Parent: "p"}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "POST#p"}}
	if _, err := c.Encode(scope, key); !errs.Is(err, errs.Internal) {
		t.Fatalf("Encode with the key unreadable: %v, want Internal", err)
	}
	if _, err := c.Decode(scope, "x.y"); !errs.Is(err, errs.Internal) {
		t.Fatalf("Decode with the key unreadable: %v, want Internal (not InvalidNextToken)", err)
	}
	token, err := c.Encode(scope, key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cursor.New([]byte("k")).Decode(scope, token); err != nil {
		t.Errorf("the token is not signed with the loaded key: %v", err)
	}
	c.Decode(scope, token)
	if loads != 3 {
		t.Errorf("%d loads; want 3 (two failed, one kept)", loads)
	}
}
