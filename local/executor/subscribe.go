package executor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/local/jsresolver"
)

// root loads the stack's resolver of the root fields that need JavaScript
// (subscriptions the Lambda authorizes, mutations that end subscriptions)
// once. It is embedded, so a failure is a build error, caught by this
// package's tests.
var root = sync.OnceValue(func() *jsresolver.Resolver {
	r, err := jsresolver.Load("appsyncjs/root.js", appsyncjs.Root)
	if err != nil {
		panic(err)
	}
	return r
})

// Subscribe runs, as a subscription to the Subscription field starts, the
// resolver the stack deploys on a routed subscription field
// (appsyncjs/root.js), as AppSync does: its request handler, the
// Lambda's invocation it asks for (within the function's timeout and
// Lambda's payload limit), and its response handler. It returns what the
// handler set through extensions (its filters), nothing for a field that
// is not routed (AppSync runs no resolver: the arguments alone filter), or
// the handler's GraphQL error (*jsresolver.Error).
func (e *Executor) Subscribe(ctx context.Context, field string, args map[string]any, caller *appsync.Identity) (jsresolver.Extensions, error) {
	route, ok := e.routes["Subscription."+field]
	if !ok || !route.Subscribes() {
		return jsresolver.Extensions{}, nil
	}
	var identity any
	if caller != nil {
		b, _ := json.Marshal(caller)
		_ = json.Unmarshal(b, &identity)
	}
	jsctx := jsresolver.Context{Arguments: args, Identity: identity, Request: map[string]any{"headers": map[string]any{}},
		Info: jsresolver.Info{FieldName: field, ParentTypeName: "Subscription"}}
	r := root()
	req, err := r.Request(jsctx)
	if err != nil {
		return jsresolver.Extensions{}, err
	}
	if req.Early { // no data source and no response handler: no filters
		return jsresolver.Extensions{}, nil
	}
	result, err := e.invokeOnce(ctx, req.Payload)
	if err != nil {
		o := lambdaError(err)
		jsctx.Error = &jsresolver.SourceErr{Message: o.err.Error(), Type: o.errType}
	}
	jsctx.Result = result
	_, ext, err := r.Response(jsctx)
	return ext, err
}

// invokeOnce invokes the Lambda with one event, as Lambda would: within
// the function's timeout, refusing a request or a reply over the limit.
func (e *Executor) invokeOnce(ctx context.Context, event any) (any, error) {
	request, err := payload.Marshal(event)
	if err != nil {
		return nil, err
	}
	if len(request) > payload.MaxBytes {
		return nil, errRequestTooLarge
	}
	reply, err := e.invokeFunction(ctx, ctx, request)
	if err != nil {
		return nil, err
	}
	if len(reply) > payload.MaxBytes {
		return nil, errReplyTooLarge
	}
	var v any
	if len(reply) > 0 {
		if err := json.Unmarshal(reply, &v); err != nil {
			return nil, fmt.Errorf("the Lambda's reply is not JSON: %v", err)
		}
	}
	return v, nil
}
