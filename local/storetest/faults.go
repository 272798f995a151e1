package storetest

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/example/appsync-dynamo/lambda/store"
)

// HalfUnprocessed is client middleware that makes DynamoDB Local's BatchGetItem answers look like a
// busy table's, for tests of retries: half of the items returned are withheld and listed in
// UnprocessedKeys instead, on every call.
func HalfUnprocessed(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test.halfUnprocessed",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			o, ok := out.Result.(*dynamodb.BatchGetItemOutput)
			if err != nil || !ok {
				return out, md, err
			}
			for table, items := range o.Responses {
				keep := len(items) - len(items)/2
				if o.UnprocessedKeys == nil {
					o.UnprocessedKeys = map[string]types.KeysAndAttributes{}
				}
				ka := o.UnprocessedKeys[table]
				for _, item := range items[keep:] {
					ka.Keys = append(ka.Keys, map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
				}
				o.UnprocessedKeys[table] = ka
				o.Responses[table] = items[:keep]
			}
			return out, md, nil
		}), middleware.After)
}

// CommitThenFail is a store.API whose first TransactWriteItems reaches
// DynamoDB (and commits) but is answered with Err, as when a reply is lost
// or the SDK's retries end in TransactionInProgressException. It records the
// ClientRequestToken of every TransactWriteItems.
type CommitThenFail struct {
	store.API
	Err error

	mu     sync.Mutex
	failed bool
	Tokens []string
}

func (c *CommitThenFail) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	out, err := c.API.TransactWriteItems(ctx, in, opts...)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.Tokens = append(c.Tokens, aws.ToString(in.ClientRequestToken))
	if err == nil && !c.failed {
		c.failed = true
		return nil, c.Err
	}
	return out, err
}

// SlowWrites is a store.API whose BatchWriteItem requests each take Delay
// longer, and which records how many were in flight at most.
type SlowWrites struct {
	store.API
	Delay time.Duration

	mu                    sync.Mutex
	inFlight, MaxInFlight int
	Calls                 int
}

func (s *SlowWrites) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	s.mu.Lock()
	s.inFlight++
	s.Calls++
	s.MaxInFlight = max(s.MaxInFlight, s.inFlight)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.inFlight--
		s.mu.Unlock()
	}()
	select {
	case <-time.After(s.Delay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.API.BatchWriteItem(ctx, in, opts...)
}
