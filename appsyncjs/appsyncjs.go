// Package appsyncjs holds the AppSync JavaScript resolvers (runtime
// APPSYNC_JS) of the API as files: the CDK stack deploys them and the local
// AppSync runs them, from the same bytes.
package appsyncjs

import _ "embed"

// Child is the resolver of every child field (resolver.Route.EarlyReturn): it
// returns the parent's answer for the field early when there is one, and
// otherwise invokes the Lambda with BatchInvoke.
//
//go:embed child.js
var Child string

// Root is the resolver of a root field that needs JavaScript: a
// subscription the Lambda authorizes (resolver.Route.Subscribes: it asks
// the Lambda whether the caller may read what the subscription follows,
// refuses it when not, and sets its enhanced and invalidation filters to
// its arguments) and a mutation that ends subscriptions
// (resolver.Route.Invalidates: it returns the Lambda's value and asks
// AppSync to end the subscriptions the Lambda names).
//
//go:embed root.js
var Root string
