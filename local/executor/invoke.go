package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-lambda-go/lambda/messages"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/resolver"
)

// Invoking the Lambda as AppSync does: one event a call or batches of the
// field's size, within Lambda's payload limit and the function's timeout,
// and the reply decoded into each field's outcome.

type outcome struct {
	data    any
	err     error
	errType string
}

// invoke calls the Lambda for every call of one field: in batches of at most
// MaxBatchSize events when the route batches, otherwise one event a call,
// the invocations running concurrently.
func (r *run) invoke(ctx context.Context, route resolver.Route, calls []call) []outcome {
	if r.ctx.Err() != nil { // past the request's time: no resolver runs, not even one returning early
		out := make([]outcome, len(calls))
		for i := range out {
			out[i] = lambdaError(errExecutionTimeout)
		}
		return out
	}
	if js := r.e.jsResolver(route); js != nil {
		return r.invokeJS(ctx, route, calls, js)
	}
	out := make([]outcome, len(calls))
	for len(calls) > 0 && calls[len(calls)-1].limited { // the limited calls are the last ones
		out[len(calls)-1] = errResolverLimit
		calls = calls[:len(calls)-1]
	}
	size := route.MaxBatchSize
	var wg sync.WaitGroup
	branch := cost.Together(ctx) // the invocations of a field run at the same time
	if size <= 0 {
		for i := range calls {
			ctx := branch()
			wg.Go(func() { out[i] = r.invokeOne(ctx, calls[i]) })
		}
		wg.Wait()
		return out
	}
	for start := 0; start < len(calls); start += size {
		chunk := calls[start:min(start+size, len(calls))]
		ctx := branch()
		wg.Go(func() { copy(out[start:], r.invokeBatch(ctx, chunk)) })
	}
	wg.Wait()
	return out
}

func (r *run) invokeOne(ctx context.Context, c call) outcome {
	reply, err := r.invokePayload(ctx, r.event(c), -1, site{field: c.key(), calls: []call{c}, direct: true})
	if err != nil {
		return lambdaError(err)
	}
	return outcome{data: reply[0]}
}

// invokePayload invokes the Lambda with p, for s, and decodes its reply: n
// items for a batch, or (n < 0) one value.
func (r *run) invokePayload(ctx context.Context, p any, n int, s site) ([]any, error) {
	request, err := payload.Marshal(p)
	if err != nil {
		return nil, err
	}
	reply, err := r.call(ctx, request, s)
	if err != nil {
		return nil, err
	}
	if n < 0 {
		var v any
		if len(reply) > 0 {
			if err := json.Unmarshal(reply, &v); err != nil {
				return nil, fmt.Errorf("the Lambda's reply is not JSON: %v", err)
			}
		}
		return []any{v}, nil
	}
	var items []any
	if err := json.Unmarshal(reply, &items); err != nil {
		return nil, fmt.Errorf("the Lambda's reply to a batch is not a JSON array: %v", err)
	}
	if len(items) != n {
		return nil, fmt.Errorf("the Lambda answered %d items for a batch of %d", len(items), n)
	}
	return items, nil
}

func (r *run) invokeBatch(ctx context.Context, calls []call) []outcome {
	out := make([]outcome, len(calls))
	events := make([]appsync.Event, len(calls))
	for i, c := range calls {
		events[i] = r.event(c)
	}
	items, err := r.invokePayload(ctx, events, len(calls), site{field: calls[0].key(), calls: calls, direct: true})
	for i, it := range items {
		if _, ok := it.(map[string]any); !ok && err == nil {
			err = fmt.Errorf("item %d of the Lambda's reply to a batch is not an object {data, errorMessage, errorType}", i)
		}
	}
	if err != nil {
		// A failed invocation fails every field of the batch, as in AppSync.
		for i := range out {
			out[i] = lambdaError(err)
		}
		return out
	}
	for i, it := range items {
		item := it.(map[string]any)
		if msg, _ := item["errorMessage"].(string); msg != "" {
			errType, _ := item["errorType"].(string)
			out[i] = outcome{err: errors.New(msg), errType: errType}
			continue
		}
		out[i] = outcome{data: item["data"]}
	}
	return out
}

// The errors of a payload over Lambda's limit. Lambda refuses the request
// before the function runs (RequestTooLargeException, HTTP 413), and replaces
// a reply over the limit with a function error (Function.ResponseSizeTooLarge),
// which AppSync reports as an unhandled Lambda error. Both limits are
// payload.MaxBytes here (Lambda's reply limit is 100 bytes larger).
var (
	errRequestTooLarge = messages.InvokeResponse_Error{Type: "Lambda:RequestTooLargeException",
		Message: fmt.Sprintf("Request must be smaller than %d bytes for the InvokeFunction operation", payload.MaxBytes)}
	errReplyTooLarge = messages.InvokeResponse_Error{Type: "Lambda:Unhandled",
		Message: fmt.Sprintf("Response payload size exceeded maximum allowed payload size (%d bytes).", payload.MaxBytes)}
)

// errExecutionTimeout fails the fields not resolved within RequestTimeout.
var errExecutionTimeout = messages.InvokeResponse_Error{Type: "ExecutionTimeout", Message: "Execution timed out."}

// call invokes the Lambda with request as Lambda would: with the function's
// timeout as deadline, refusing a request or a reply over the limit, and
// recording the largest of them. ctx is the request's, or one of its
// concurrent branches (cost.Together).
func (r *run) call(ctx context.Context, request []byte, s site) ([]byte, error) {
	if r.ctx.Err() != nil {
		return nil, errExecutionTimeout
	}
	r.record(len(request))
	if len(request) > payload.MaxBytes {
		return nil, errRequestTooLarge
	}
	r.mu.Lock()
	r.invocations++
	r.mu.Unlock()
	ctx, ended := r.plan.invoked(ctx, s, len(request))
	reply, err := r.e.invokeFunction(ctx, r.ctx, request)
	ended(len(reply))
	if err != nil {
		return nil, err
	}
	r.record(len(reply))
	if len(reply) > payload.MaxBytes {
		return nil, errReplyTooLarge
	}
	return reply, nil
}

// invokeFunction invokes the Lambda with request within the function's
// timeout: a function that runs to it (before outer, the request's
// context, ends) is answered as Lambda answers it.
func (e *Executor) invokeFunction(ctx, outer context.Context, request []byte) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, e.functionTimeout)
	defer cancel()
	reply, err := e.lambda.Invoke(ctx, request)
	if errors.Is(ctx.Err(), context.DeadlineExceeded) && outer.Err() == nil {
		return nil, messages.InvokeResponse_Error{Type: "Lambda:Unhandled",
			Message: fmt.Sprintf("Task timed out after %.2f seconds", e.functionTimeout.Seconds())}
	}
	return reply, err
}

func (r *run) record(size int) {
	r.mu.Lock()
	r.largest = max(r.largest, size)
	r.bytes += size
	r.mu.Unlock()
}

func lambdaError(err error) outcome {
	var ie messages.InvokeResponse_Error
	if errors.As(err, &ie) {
		return outcome{err: errors.New(ie.Message), errType: ie.Type}
	}
	return outcome{err: err, errType: "Lambda:Unhandled"}
}
