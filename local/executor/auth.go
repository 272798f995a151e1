package executor

import (
	"slices"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// Authorization as AppSync decides it before any resolver runs: the
// field's auth directives, else its type's, else the default mode.

// authorized reports whether the caller may read field of typ (Authorized).
func (r *run) authorized(typ *ast.Definition, field *ast.FieldDefinition) bool {
	return Authorized(typ, field, r.req.Identity)
}

// Authorized reports whether caller may read field of typ, as AppSync
// decides before any resolver runs: a field's own auth directives, else its
// type's, else the API's default mode (Cognito user pools) alone. The caller
// is an API-key caller without an identity, an IAM caller with an account
// and no sub, a user-pool caller otherwise.
func Authorized(typ *ast.Definition, field *ast.FieldDefinition, caller *appsync.Identity) bool {
	mode := "aws_cognito_user_pools"
	switch {
	case caller == nil:
		mode = "aws_api_key"
	case caller.AccountID != "" && caller.Sub == "":
		mode = "aws_iam"
	}
	modes := authModes(field.Directives)
	if modes == nil {
		modes = authModes(typ.Directives)
	}
	if modes == nil {
		return mode == "aws_cognito_user_pools"
	}
	return slices.Contains(modes, mode)
}

// authModes returns the auth directives among ds, nil when there are none.
func authModes(ds ast.DirectiveList) []string {
	var modes []string
	for _, d := range ds {
		switch d.Name {
		case "aws_api_key", "aws_cognito_user_pools", "aws_iam", "aws_oidc", "aws_lambda":
			modes = append(modes, d.Name)
		}
	}
	return modes
}
