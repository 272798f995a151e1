package devserver

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/realtime"
)

// Issuer is the issuer of local tokens, shaped like a Cognito user pool's.
const Issuer = "https://cognito-idp.local.amazonaws.com/local_devpool"

// Identity turns an Authorization header into the caller AppSync would see.
// No header is API-key access (nil identity). A Signature V4 header
// (AWS4-HMAC-SHA256 Credential=<key>/...) is an IAM caller, the access key
// its user (the signature is not checked: this is a local tool). Otherwise
// the header is a JWT, signed or not, and its claims become a Cognito user
// pools identity, as Amplify's mock does.
func Identity(authorization, sourceIP string) (*appsync.Identity, error) {
	token := strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(authorization), "Bearer "))
	if token == "" {
		return nil, nil
	}
	if rest, ok := strings.CutPrefix(token, "AWS4-HMAC-SHA256 Credential="); ok {
		key, _, _ := strings.Cut(rest, "/")
		if key == "" {
			return nil, errors.New("a Signature V4 Authorization without an access key")
		}
		return &appsync.Identity{AccountID: LocalAccount, UserArn: "arn:aws:iam::" + LocalAccount + ":user/" + key, Username: key,
			SourceIP: []string{sourceIP}}, nil
	}
	parts := strings.Split(token, ".")
	if len(parts) < 2 {
		return nil, errors.New("Authorization is not a JWT")
	}
	payload, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[1], "="))
	if err != nil {
		return nil, errors.New("Authorization is not a JWT: bad payload encoding")
	}
	var claims map[string]any
	if err := json.Unmarshal(payload, &claims); err != nil {
		return nil, errors.New("Authorization is not a JWT: payload is not JSON")
	}
	str := func(k string) string { s, _ := claims[k].(string); return s }
	sub := str("sub")
	if sub == "" {
		return nil, errors.New("the token has no sub claim")
	}
	if exp, ok := claims["exp"].(float64); ok && time.Now().After(time.Unix(int64(exp), 0)) {
		return nil, errors.New(realtime.TokenExpired)
	}
	id := &appsync.Identity{
		Sub: sub, Issuer: str("iss"), Username: str("cognito:username"), Claims: payload,
		SourceIP: []string{sourceIP}, DefaultAuthStrategy: "ALLOW",
	}
	if id.Username == "" {
		id.Username = str("username")
	}
	if groups, ok := claims["cognito:groups"].([]any); ok {
		for _, g := range groups {
			if s, ok := g.(string); ok {
				id.Groups = append(id.Groups, s)
			}
		}
	}
	return id, nil
}

// LocalAccount is the AWS account of the local AppSync's IAM callers.
const LocalAccount = "000000000000"

// Token returns an unsigned JWT (alg "none") for a local user: sub is the
// user's ID, as in the sample data (u_<name>).
func Token(username string) string { return TokenUntil(username, time.Unix(4102444800, 0)) }

// TokenUntil is Token, expiring at exp: the local AppSync refuses it after,
// and ends its subscriptions then.
func TokenUntil(username string, exp time.Time) string {
	enc := base64.RawURLEncoding
	header, _ := json.Marshal(map[string]string{"alg": "none", "typ": "JWT"})
	claims, _ := json.Marshal(map[string]any{
		"sub": "u_" + username, "cognito:username": username, "email": username + "@example.com",
		"iss": Issuer, "token_use": "id", "aud": "local", "iat": 1714381200, "exp": exp.Unix(),
	})
	return enc.EncodeToString(header) + "." + enc.EncodeToString(claims) + "."
}
