// Package schema embeds the API's GraphQL contract (schema.graphql) and the
// declarations AppSync provides implicitly (its AWS* scalars and @aws_*
// directives), so Go code can load the contract as AppSync does.
package schema

import (
	_ "embed"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// SDL is the text of schema.graphql: the core API's schema, deployed with
// the fragments of the features wired in merged into it (Merge).
//
//go:embed schema.graphql
var SDL string

// AppSyncPrelude declares what AppSync defines for every API and the schema
// file must not: the AWS scalars and the authorization and subscription
// directives.
const AppSyncPrelude = `
scalar AWSDate
scalar AWSTime
scalar AWSDateTime
scalar AWSTimestamp
scalar AWSEmail
scalar AWSJSON
scalar AWSURL
scalar AWSPhone
scalar AWSIPAddress

directive @aws_api_key on OBJECT | FIELD_DEFINITION
directive @aws_iam on OBJECT | FIELD_DEFINITION
directive @aws_oidc on OBJECT | FIELD_DEFINITION
directive @aws_lambda on OBJECT | FIELD_DEFINITION
directive @aws_cognito_user_pools(cognito_groups: [String]) on OBJECT | FIELD_DEFINITION
directive @aws_auth(cognito_groups: [String]) on FIELD_DEFINITION
directive @aws_subscribe(mutations: [String]) on FIELD_DEFINITION
`

// Load parses and validates the schema, with the fragments of the features
// wired in merged into it (Merge), with gqlparser's GraphQL prelude and
// AppSync's.
func Load(fragments ...string) (*ast.Schema, error) {
	sdl, err := Merge(SDL, fragments...)
	if err != nil {
		return nil, err
	}
	s, err := gqlparser.LoadSchema(
		&ast.Source{Name: "appsync-prelude.graphql", Input: AppSyncPrelude, BuiltIn: true},
		&ast.Source{Name: "schema/schema.graphql", Input: sdl},
	)
	if err != nil {
		return nil, err
	}
	return s, nil
}
