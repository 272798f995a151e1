package appsync

import "encoding/json"

// Identity is the caller as AppSync describes it; which fields are set
// depends on the authorization mode (user pools, OIDC, IAM, a Lambda
// authorizer). API-key requests have no identity at all.
type Identity struct {
	Sub                 string          `json:"sub,omitempty"`
	Issuer              string          `json:"issuer,omitempty"`
	Username            string          `json:"username,omitempty"`
	Claims              json.RawMessage `json:"claims,omitempty"`
	SourceIP            []string        `json:"sourceIp,omitempty"`
	DefaultAuthStrategy string          `json:"defaultAuthStrategy,omitempty"`
	Groups              []string        `json:"groups,omitempty"`

	AccountID         string `json:"accountId,omitempty"`
	UserArn           string `json:"userArn,omitempty"`
	CognitoIdentityID string `json:"cognitoIdentityId,omitempty"`

	ResolverContext map[string]string `json:"resolverContext,omitempty"`
}

// UserID returns the application user the caller acts as: the token's sub
// for Cognito and OIDC, resolverContext.userId for a Lambda authorizer, and
// "" for everyone else (API key, IAM without a user).
func (id *Identity) UserID() string {
	switch {
	case id == nil:
		return ""
	case id.Sub != "":
		return id.Sub
	default:
		return id.ResolverContext["userId"]
	}
}
