package store

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// Reading many items at once: BatchGetItem of at most 100 distinct keys a
// request, the chunks sent together, unprocessed keys retried with backoff
// and jitter until done or out of time.

// Key is an item's primary key.
type Key struct{ PK, SK string }

// Attributes are the key as a request names an item.
func (k Key) Attributes() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

func keyOf(item map[string]types.AttributeValue) (Key, bool) {
	pk, ok1 := item[AttrPK].(*types.AttributeValueMemberS)
	sk, ok2 := item[AttrSK].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return Key{}, false
	}
	return Key{pk.Value, sk.Value}, true
}

// maxBatchGetKeys is the most keys one BatchGetItem request takes.
const maxBatchGetKeys = 100

// Backoff for UnprocessedKeys: full jitter over an exponentially growing
// window, and a ceiling on the total time when the context has no deadline.
const (
	backoffBase     = 20 * time.Millisecond
	backoffCap      = time.Second
	noDeadlineLimit = 20 * time.Second
)

// BatchGet reads the items with keys (deduplicated), one BatchGetItem per
// 100, concurrently, eventually consistent, retrying UnprocessedKeys until
// the deadline is near; absent items are missing. attrs, when not nil,
// limits what is read besides the keys.
func (s *Store) BatchGet(ctx context.Context, op string, keys []Key, attrs []string) (map[Key]map[string]types.AttributeValue, error) {
	return s.batchRead(ctx, op, keys, attrs, false)
}

// batchRead is batchGet, strongly consistent when consistent is true (a read
// unit per item of up to 4 KB, twice an eventually consistent read).
func (s *Store) batchRead(ctx context.Context, op string, keys []Key, attrs []string, consistent bool) (map[Key]map[string]types.AttributeValue, error) {
	unique := make([]Key, 0, len(keys))
	seen := make(map[Key]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			unique = append(unique, k)
		}
	}
	found := make(map[Key]map[string]types.AttributeValue, len(unique))
	if len(unique) == 0 {
		return found, nil
	}
	if len(unique) <= maxBatchGetKeys { // one chunk: no goroutine to hand it to
		items, err := s.batchGetChunk(ctx, op, unique, attrs, consistent)
		for _, item := range items {
			if k, ok := keyOf(item); ok {
				found[k] = item
			}
		}
		return found, err
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	branch := cost.Together(ctx) // the chunks are sent at once
	for start := 0; start < len(unique); start += maxBatchGetKeys {
		chunk := unique[start:min(start+maxBatchGetKeys, len(unique))]
		ctx := branch()
		wg.Go(func() {
			items, err := s.batchGetChunk(ctx, op, chunk, attrs, consistent)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for _, item := range items {
				if k, ok := keyOf(item); ok {
					found[k] = item
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return found, nil
}

// batchGetChunk reads at most 100 distinct keys, retrying UnprocessedKeys.
func (s *Store) batchGetChunk(ctx context.Context, op string, keys []Key, attrs []string, consistent bool) ([]map[string]types.AttributeValue, error) {
	request := types.KeysAndAttributes{Keys: make([]map[string]types.AttributeValue, len(keys))}
	if consistent {
		request.ConsistentRead = aws.Bool(true)
	}
	for i, k := range keys {
		request.Keys[i] = k.Attributes()
	}
	if attrs != nil {
		expr, err := expression.NewBuilder().WithProjection(namesList(append([]string{AttrPK, AttrSK}, CountedAttrs(attrs)...))).Build()
		if err != nil {
			return nil, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		request.ExpressionAttributeNames, request.ProjectionExpression = expr.Names(), expr.Projection()
	}
	pending := map[string]types.KeysAndAttributes{s.table: request}
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	var items []map[string]types.AttributeValue
	for attempt := 0; ; attempt++ {
		out, err := s.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, Fail(op, err)
		}
		items = append(items, out.Responses[s.table]...)
		if len(out.UnprocessedKeys[s.table].Keys) == 0 {
			return items, nil
		}
		pending = out.UnprocessedKeys
		wait := backoff(attempt)
		if time.Until(deadline) < wait+backoffBase {
			return nil, errs.E(op, errs.Throttled, "DynamoDB left keys unprocessed until the deadline; retry later")
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, errs.Wrap(op, errs.Internal, "internal error", err)
		}
	}
}

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff returns a random wait in [0, min(cap, base*2^attempt)).
func backoff(attempt int) time.Duration {
	window := backoffCap
	if attempt < 16 {
		window = min(backoffCap, backoffBase<<attempt)
	}
	return rand.N(window)
}
