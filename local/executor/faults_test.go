package executor_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/proc"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/schema"
)

// TestAHangingDynamoDBIsAnsweredBeforeTheDeadline points the handler at an
// endpoint that never answers: every field must fail with Throttled within
// the function's timeout, and the log must say why.
func TestAHangingDynamoDBIsAnsweredBeforeTheDeadline(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	log := &proc.Output{}
	s := store.New(ddblocal.Client(ddblocal.BlackHole(t)), "t", cursor.New([]byte("k")))
	h := resolver.New(s, slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelWarn})), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))
	const timeout = time.Second
	e := executor.New(sch, lambda.NewHandler(h), resolver.CoreRoutes, executor.WithTimeouts(executor.RequestTimeout, timeout))
	start := time.Now()
	resp := e.Execute(context.Background(), executor.Request{Query: `{ a: post(id: "` + sample.HelloPost + `") { title } b: user(id: "u_alice") { name } }`})
	took := time.Since(start)
	if took >= timeout || len(resp.Errors) != 2 {
		t.Fatalf("answered after %v (function timeout %v) with %+v", took, timeout, resp.Errors)
	}
	for _, e := range resp.Errors {
		if e.ErrorType != "Throttled" {
			t.Errorf("error %+v, want Throttled", e)
		}
	}
	if !strings.Contains(log.String(), "context deadline exceeded") {
		t.Errorf("the log does not say why:\n%s", log.String())
	}
	t.Logf("answered in %v", took)
}

// slowLambda answers after delay, or when its context ends.
type slowLambda struct{ delay time.Duration }

func (s slowLambda) Invoke(ctx context.Context, _ []byte) ([]byte, error) {
	select {
	case <-time.After(s.delay):
	case <-ctx.Done():
	}
	return []byte(`{"id":"p","title":"t"}`), nil
}

func TestTimeoutsAreAppSyncs(t *testing.T) {
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	// A function that outruns its timeout fails its field as Lambda does.
	e := executor.New(sch, slowLambda{delay: time.Hour}, resolver.CoreRoutes, executor.WithTimeouts(time.Minute, 100*time.Millisecond))
	resp := e.Execute(context.Background(), executor.Request{Query: `{ post(id: "p") { title } }`})
	if len(resp.Errors) != 1 || !strings.Contains(resp.Errors[0].Message, "Task timed out") {
		t.Errorf("function timeout: %+v", resp.Errors)
	}
	// A request that outruns AppSync's limit fails the fields not yet resolved.
	e = executor.New(sch, slowLambda{delay: 150 * time.Millisecond}, resolver.CoreRoutes, executor.WithTimeouts(100*time.Millisecond, time.Minute))
	resp = e.Execute(context.Background(), executor.Request{Query: `{ post(id: "p") { title author { name } } }`})
	if len(resp.Errors) != 1 || resp.Errors[0].ErrorType != "ExecutionTimeout" {
		t.Errorf("request timeout: %+v", resp.Errors)
	}
}
