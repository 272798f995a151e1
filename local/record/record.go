// Package record records the event the local AppSync sends the Lambda for
// one field while it runs a query: how an event of events/ is made (make
// event), so that its info (selectionSetList, selectionSetGraphQL,
// arguments, variables) and its source are what AppSync would send, not
// edited by hand.
package record

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// A Request is what to record: the event of Field ("Type.field") that the
// first invocation for it receives while Query runs, with Variables, as
// Caller (a sample user's handle; "" for an API key).
type Request struct {
	Field, Query, Caller string
	Variables            map[string]any
}

// Event runs r.Query through the local AppSync, over table, a
// new table at the DynamoDB Local at endpoint loaded with the sample data
// the replays run on (sample.Data), and returns the payload of the first
// invocation of r.Field, indented: one event, or an array of them where
// AppSync batches the field. The Lambda gives no early answers (so that
// appsyncjs/child.js invokes it for every child field, as it does for a
// field without one). It fails when the query is refused, or resolves the
// field without invoking the Lambda for it.
func Event(ctx context.Context, endpoint, table string, r Request) ([]byte, error) {
	typ, field, ok := strings.Cut(r.Field, ".")
	if !ok || typ == "" || field == "" {
		return nil, fmt.Errorf("the field %q is not Type.field", r.Field)
	}
	if err := ddblocal.Seed(ctx, endpoint, table, sample.Data()); err != nil {
		return nil, err
	}
	// Tokens signed as the replays check them: a nextToken a recorded
	// query was given by an earlier one replays.
	s := storetest.New(ddblocal.Client(endpoint), table)
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		return nil, err
	}
	h := resolver.New(s, slog.New(slog.DiscardHandler), append(wired.Options(s), resolver.WithCostLog(io.Discard), resolver.WithoutAnswers())...)
	rec := &recorder{next: lambda.NewHandler(h), typ: typ, field: field}
	exec := executor.New(sch, rec, h.Routes().All())
	req := executor.Request{Query: r.Query, Variables: r.Variables}
	if r.Caller != "" {
		if req.Identity, err = devserver.Identity(devserver.Token(r.Caller), "203.0.113.24"); err != nil {
			return nil, err
		}
	}
	resp := exec.Execute(ctx, req)
	got := rec.recorded()
	if got == nil {
		var msgs []string
		for _, e := range resp.Errors {
			msgs = append(msgs, e.Message)
		}
		return nil, fmt.Errorf("the query invoked the Lambda for no %s (errors: %q)", r.Field, msgs)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, got, "", "  "); err != nil {
		return nil, err
	}
	return append(out.Bytes(), '\n'), nil
}

// recorder passes every invocation on to next, and keeps the payload of
// the first one for typ.field.
type recorder struct {
	next       executor.Invoker
	typ, field string
	mu         sync.Mutex
	got        []byte
}

// recorded is the payload kept, nil before one is.
func (r *recorder) recorded() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

func (r *recorder) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	var info struct {
		Info struct{ ParentTypeName, FieldName string }
	}
	first := payload
	var batch []json.RawMessage
	if json.Unmarshal(payload, &batch) == nil && len(batch) > 0 {
		first = batch[0]
	}
	if json.Unmarshal(first, &info) == nil && info.Info.ParentTypeName == r.typ && info.Info.FieldName == r.field {
		r.mu.Lock()
		if r.got == nil {
			r.got = bytes.Clone(payload)
		}
		r.mu.Unlock()
	}
	return r.next.Invoke(ctx, payload)
}
