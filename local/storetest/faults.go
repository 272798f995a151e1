package storetest

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
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
// longer, and which records how many were in flight at most and when the
// last one started.
type SlowWrites struct {
	store.API
	Delay time.Duration

	mu                    sync.Mutex
	inFlight, MaxInFlight int
	Calls                 int
	LastStart             time.Time
}

func (s *SlowWrites) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	s.mu.Lock()
	s.inFlight++
	s.Calls++
	s.MaxInFlight = max(s.MaxInFlight, s.inFlight)
	s.LastStart = time.Now()
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

// Conflicts is a store.API that cancels a share of its TransactWriteItems
// before they reach DynamoDB, as DynamoDB cancels a transaction that touches
// an item another one is changing (TransactionConflict), which DynamoDB
// Local never does. Rate is the share cancelled (0.3: three in ten), drawn
// from a generator seeded with Seed; it counts the calls and cancellations.
type Conflicts struct {
	store.API
	Rate float64
	Seed uint64

	mu               sync.Mutex
	rng              *rand.Rand
	Calls, Cancelled int
}

func (c *Conflicts) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.mu.Lock()
	if c.rng == nil {
		c.rng = rand.New(rand.NewPCG(c.Seed, 1))
	}
	c.Calls++
	cancel := c.rng.Float64() < c.Rate
	if cancel {
		c.Cancelled++
	}
	c.mu.Unlock()
	if !cancel {
		return c.API.TransactWriteItems(ctx, in, opts...)
	}
	reasons := make([]types.CancellationReason, len(in.TransactItems))
	for i := range reasons {
		reasons[i].Code = aws.String("None")
	}
	reasons[0].Code = aws.String("TransactionConflict")
	reasons[0].Message = aws.String("Transaction is ongoing for the item (injected)")
	return nil, &types.TransactionCanceledException{Message: aws.String("Transaction cancelled (injected)"), CancellationReasons: reasons}
}

// FailingBatchWrites is a store.API whose BatchWriteItem requests all fail
// with Err (a refused request, say), as a sweep meets when DynamoDB refuses
// it after the transaction before it committed.
type FailingBatchWrites struct {
	store.API
	Err error
}

func (f FailingBatchWrites) BatchWriteItem(context.Context, *dynamodb.BatchWriteItemInput, ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	return nil, f.Err
}

// ThrottleWrites is a store.API that refuses every Every-th
// TransactWriteItems with a ThrottlingException, unsent, as DynamoDB
// refuses a write to a partition past its limit: nothing of it is written.
type ThrottleWrites struct {
	store.API
	Every int

	mu             sync.Mutex
	calls, Refused int
}

func (c *ThrottleWrites) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	c.mu.Lock()
	c.calls++
	refuse := c.calls%c.Every == 0
	if refuse {
		c.Refused++
	}
	c.mu.Unlock()
	if refuse {
		return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput."}
	}
	return c.API.TransactWriteItems(ctx, in, opts...)
}

// ThrottleQueriesOf is a store.API whose Query of partition PK DynamoDB
// refuses as throttled, every time; every other request goes through.
type ThrottleQueriesOf struct {
	store.API
	PK string
}

func (c *ThrottleQueriesOf) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	for _, v := range in.ExpressionAttributeValues {
		if s, ok := v.(*types.AttributeValueMemberS); ok && s.Value == c.PK {
			return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate of requests exceeds the allowed throughput."}
		}
	}
	return c.API.Query(ctx, in, opts...)
}

// Meanwhile is a store.API that runs Do once, and waits for it, just before
// the first GetItem, UpdateItem or TransactWriteItems that Before accepts
// goes to DynamoDB: what another Lambda environment writes between one
// environment's read and the write that follows it.
type Meanwhile struct {
	store.API
	Before func(in any) bool
	Do     func()

	mu   sync.Mutex
	done bool
}

func (m *Meanwhile) hold(in any) {
	m.mu.Lock()
	run := !m.done && m.Before(in)
	m.done = m.done || run
	m.mu.Unlock()
	if run {
		m.Do()
	}
}

// Ran reports whether Do has run.
func (m *Meanwhile) Ran() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.done
}

func (m *Meanwhile) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	m.hold(in)
	return m.API.GetItem(ctx, in, opts...)
}

func (m *Meanwhile) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	m.hold(in)
	return m.API.UpdateItem(ctx, in, opts...)
}

func (m *Meanwhile) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	m.hold(in)
	return m.API.TransactWriteItems(ctx, in, opts...)
}

// GetOf accepts a GetItem of the item pk, sk.
func GetOf(pk, sk string) func(any) bool {
	return func(in any) bool {
		g, ok := in.(*dynamodb.GetItemInput)
		return ok && keyIs(g.Key, pk, sk)
	}
}

// TransactionOn accepts a TransactWriteItems that writes or checks the item
// pk, sk.
func TransactionOn(pk, sk string) func(any) bool {
	return func(in any) bool {
		t, ok := in.(*dynamodb.TransactWriteItemsInput)
		if !ok {
			return false
		}
		for _, it := range t.TransactItems {
			switch {
			case it.Put != nil && keyIs(it.Put.Item, pk, sk),
				it.Update != nil && keyIs(it.Update.Key, pk, sk),
				it.Delete != nil && keyIs(it.Delete.Key, pk, sk),
				it.ConditionCheck != nil && keyIs(it.ConditionCheck.Key, pk, sk):
				return true
			}
		}
		return false
	}
}

func keyIs(item map[string]types.AttributeValue, pk, sk string) bool {
	p, _ := item["pk"].(*types.AttributeValueMemberS)
	s, _ := item["sk"].(*types.AttributeValueMemberS)
	return p != nil && s != nil && p.Value == pk && s.Value == sk
}
