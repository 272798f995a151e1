// Package cursor turns DynamoDB's LastEvaluatedKey into a signed nextToken
// and back. A token is bound to its query (a Scope) with HMAC-SHA256, so an
// altered, forged or borrowed token is refused with errs.InvalidNextToken
// before DynamoDB sees it. Signed, not encrypted.
package cursor

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

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

// Codec signs and verifies tokens with one key. It is safe for concurrent
// use.
type Codec struct {
	key  atomic.Pointer[[]byte] // nil until known
	mu   sync.Mutex             // held while load runs
	load func() ([]byte, error)
}

// New returns a Codec that signs with key.
func New(key []byte) *Codec {
	c := &Codec{}
	k := append([]byte(nil), key...)
	c.key.Store(&k)
	return c
}

// Deferred returns a Codec whose key load gives on first use: the first
// Encode or Decode waits for it. A load that fails fails that call with an
// Internal error (never a token signed or checked without the key), and the
// next call loads again.
func Deferred(load func() ([]byte, error)) *Codec { return &Codec{load: load} }

// secret returns the key, loading it when it is not known yet.
func (c *Codec) secret() ([]byte, error) {
	if k := c.key.Load(); k != nil {
		return *k, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if k := c.key.Load(); k != nil {
		return *k, nil
	}
	k, err := c.load()
	if err != nil || len(k) == 0 {
		if err == nil {
			err = errors.New("the key is empty")
		}
		return nil, errs.Wrap("cursor", errs.Internal, "internal error", fmt.Errorf("the token key could not be read: %w", err))
	}
	c.key.Store(&k)
	return k, nil
}

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
	mac, err := c.mac(body)
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(body) + "." + enc.EncodeToString(mac), nil
}

// Decode verifies token and returns the ExclusiveStartKey it carries. A token
// that is malformed, not signed with this codec's key or issued for another
// scope is an errs.InvalidNextToken error; a key that could not be read, an
// Internal one.
func (c *Codec) Decode(scope Scope, token string) (map[string]types.AttributeValue, error) {
	const op = "cursor.Decode"
	invalid := errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
	if _, err := c.secret(); err != nil {
		return nil, err
	}
	b64body, b64mac, found := strings.Cut(token, ".")
	if !found {
		return nil, invalid
	}
	enc := base64.RawURLEncoding
	body, err1 := enc.DecodeString(b64body)
	mac, err2 := enc.DecodeString(b64mac)
	want, err := c.mac(body)
	if err != nil {
		return nil, err
	}
	if err1 != nil || err2 != nil || !hmac.Equal(mac, want) {
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

func (c *Codec) mac(body []byte) ([]byte, error) {
	key, err := c.secret()
	if err != nil {
		return nil, err
	}
	m := hmac.New(sha256.New, key)
	m.Write(body)
	return m.Sum(nil)[:macSize], nil
}
