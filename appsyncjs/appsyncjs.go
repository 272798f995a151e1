// Package appsyncjs holds the AppSync JavaScript resolvers (runtime
// APPSYNC_JS) of the API as files: the CDK stack deploys them and the local
// AppSync runs them, from the same bytes.
package appsyncjs

import _ "embed"

// Child is the resolver of every child field (routes.Route.EarlyReturn): it
// returns the parent's answer for the field early when there is one, and
// otherwise invokes the Lambda with BatchInvoke.
//
//go:embed child.js
var Child string
