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

// Subscribe is the resolver of a subscription field the Lambda authorizes
// (lambda/live's routes): it asks the Lambda whether the caller may read
// what the subscription follows, refuses it when not, and sets its enhanced
// and invalidation filters to its arguments.
//
//go:embed subscribe.js
var Subscribe string

// Invalidate is the resolver of a mutation whose route Invalidates: it
// returns the Lambda's value and asks AppSync to end the subscriptions the
// Lambda names.
//
//go:embed invalidate.js
var Invalidate string
