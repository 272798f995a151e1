// Package cursor turns DynamoDB's LastEvaluatedKey into an opaque GraphQL
// nextToken and back.
//
// A token is bound to the query it came from (a Scope: the query's name, the
// parent it was run for, the index it read and the arguments that shape it:
// order, range, status) and authenticated with
// HMAC-SHA256, so a token that was altered, forged or taken from another
// query is refused with errs.InvalidNextToken before DynamoDB sees it.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// DevelopmentKey signs tokens when no key is configured. It is public, so
// tokens signed with it prove nothing: deployments set their own key.
const DevelopmentKey = "development-only-next-token-key"

// Scope identifies the query a token belongs to.
type Scope struct {
	Query  string // the query's name, such as "Post.comments"
	Parent string // the ID the query was run for
	Index  string // the index read, "" for the table
	// Args are the arguments that decide which items the query reads and in
	// which order, written canonically ("" for the defaults): a token from
	// another order or range is refused.
	Args string
}

// Codec signs and verifies tokens with one key.
type Codec struct {
	key []byte
}

// New returns a Codec that signs with key.
func New(key []byte) *Codec { return &Codec{key: append([]byte(nil), key...)} }

const macSize = 16 // bytes of HMAC-SHA256 kept: 128 bits

type payload struct {
	Query  string            `json:"q"`
	Parent string            `json:"p"`
	Index  string            `json:"i,omitempty"`
	Args   string            `json:"a,omitempty"`
	Key    map[string]string `json:"k"`
}

// Encode returns the token for resuming the query in scope after key, a
// LastEvaluatedKey whose attributes are all strings (as every key of this
// table is).
func (c *Codec) Encode(scope Scope, key map[string]types.AttributeValue) (string, error) {
	p := payload{Query: scope.Query, Parent: scope.Parent, Index: scope.Index, Args: scope.Args, Key: make(map[string]string, len(key))}
	for name, v := range key {
		s, ok := v.(*types.AttributeValueMemberS)
		if !ok {
			return "", errs.Internalf("cursor.Encode", "key attribute %q is %T, not a string", name, v)
		}
		p.Key[name] = s.Value
	}
	body, err := json.Marshal(p)
	if err != nil {
		return "", errs.Wrap("cursor.Encode", errs.Internal, "internal error", err)
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(c.mac(body)), nil
}

// Decode verifies token and returns the ExclusiveStartKey it carries. A token
// that is malformed, not signed with this codec's key or issued for another
// scope is an errs.InvalidNextToken error.
func (c *Codec) Decode(scope Scope, token string) (map[string]types.AttributeValue, error) {
	const op = "cursor.Decode"
	invalid := errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
	b64body, b64mac, found := strings.Cut(token, ".")
	if !found {
		return nil, invalid
	}
	enc := base64.RawURLEncoding
	body, err1 := enc.DecodeString(b64body)
	mac, err2 := enc.DecodeString(b64mac)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, c.mac(body)) {
		return nil, invalid
	}
	var p payload
	if err := json.Unmarshal(body, &p); err != nil || len(p.Key) == 0 {
		return nil, invalid
	}
	if p.Query != scope.Query || p.Parent != scope.Parent || p.Index != scope.Index || p.Args != scope.Args {
		return nil, invalid
	}
	key := make(map[string]types.AttributeValue, len(p.Key))
	for name, v := range p.Key {
		key[name] = &types.AttributeValueMemberS{Value: v}
	}
	return key, nil
}

func (c *Codec) mac(body []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(body)
	return m.Sum(nil)[:macSize]
}
