package store

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Transactions: a write's actions, each with the error its failed
// condition means, run as one TransactWriteItems, confirmed when a reply is
// lost and started over on a conflict.

// txAction is one action of a transaction and what its failed condition means.
type txAction struct {
	put    map[string]types.AttributeValue // the item to put, or
	key    Key                             // the item to update, delete or check
	update *expression.UpdateBuilder       // the change, for an update
	delete bool                            // or its deletion
	cond   expression.ConditionBuilder     // the condition (unset only with always)
	// failed returns the error for this action's condition failing, given the
	// item as it was (nil when absent).
	failed func(old map[string]types.AttributeValue) error
}

// Action is one action of a transaction (Transact) and what its failed
// condition means, for a layer's own writes (lambda/hotkeys).
type Action = txAction

// Put is the action that writes item, whatever is there.
func Put(item Item) Action { return txAction{put: item} }

// Update is the action that changes the item at key by update when cond
// holds; failed is the error of cond failing, given the item as it was
// (nil when absent).
func Update(key Key, update expression.UpdateBuilder, cond expression.ConditionBuilder, failed func(old Item) error) Action {
	return txAction{key: key, update: &update, cond: cond, failed: failed}
}

// Transact runs actions as one TransactWriteItems: all of them or none, a
// failed condition returning the error its action names (see transact).
func (s *Store) Transact(ctx context.Context, op string, actions ...Action) error {
	return s.transact(ctx, op, actions...)
}

// item builds the TransactWriteItem of a for table.
func (a txAction) item(table string) (types.TransactWriteItem, error) {
	var expr expression.Expression
	if a.cond.IsSet() || a.update != nil {
		b := expression.NewBuilder()
		if a.cond.IsSet() {
			b = b.WithCondition(a.cond)
		}
		if a.update != nil {
			b = b.WithUpdate(*a.update)
		}
		var err error
		if expr, err = b.Build(); err != nil {
			return types.TransactWriteItem{}, err
		}
	}
	var allOld types.ReturnValuesOnConditionCheckFailure // what a failed condition returns: none without one
	if a.cond.IsSet() {
		allOld = types.ReturnValuesOnConditionCheckFailureAllOld
	}
	switch {
	case a.put != nil:
		return types.TransactWriteItem{Put: &types.Put{TableName: &table, Item: a.put, ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValuesOnConditionCheckFailure: allOld}}, nil
	case a.update != nil:
		return types.TransactWriteItem{Update: &types.Update{TableName: &table, Key: a.key.Attributes(), UpdateExpression: expr.Update(),
			ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(),
			ReturnValuesOnConditionCheckFailure: allOld}}, nil
	case a.delete:
		return types.TransactWriteItem{Delete: &types.Delete{TableName: &table, Key: a.key.Attributes(), ConditionExpression: expr.Condition(),
			ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values(), ReturnValuesOnConditionCheckFailure: allOld}}, nil
	}
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: &table, Key: a.key.Attributes(),
		ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}}, nil
}

// transact runs actions as one TransactWriteItems, keeping one
// ClientRequestToken while the outcome is unknown (a commit is confirmed,
// never applied twice) and a fresh one after a TransactionConflict; a failed
// condition returns the error its action names.
func (s *Store) transact(ctx context.Context, op string, actions ...txAction) error {
	items := make([]types.TransactWriteItem, len(actions))
	for i, a := range actions {
		item, err := a.item(s.table)
		if err != nil {
			return errs.Wrap(op, errs.Internal, "internal error", err)
		}
		items[i] = item
	}
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	token := requestToken()
	for attempt := 0; ; attempt++ {
		_, err := s.api.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{
			TransactItems:      items,
			ClientRequestToken: aws.String(token),
		})
		if err == nil {
			return nil
		}
		next, failure := s.cancellation(op, err, actions)
		switch next {
		case giveUp:
			return failure
		case startOver:
			token = requestToken()
		}
		wait := backoff(attempt)
		if ctx.Err() != nil || time.Until(deadline) < wait+backoffBase {
			if next == confirm {
				return errs.Wrap(op, errs.Throttled, "DynamoDB did not confirm the change in time; it may have been made: read before retrying", err)
			}
			return errs.Wrap(op, errs.Throttled, "too many concurrent changes to the same items; retry later", err)
		}
		if err := sleep(ctx, wait); err != nil {
			return errs.Wrap(op, errs.Throttled, "DynamoDB did not confirm the change in time; it may have been made: read before retrying", err)
		}
	}
}

// What to do after a failed TransactWriteItems.
type txNext int

const (
	giveUp    txNext = iota // the outcome is known: nothing was written
	startOver               // nothing was written, and trying again may succeed
	confirm                 // the outcome is unknown: repeat with the same token
)

// cancellation interprets a failed transaction: whether to try again, and
// with which token, or the error to return.
func (s *Store) cancellation(op string, err error, actions []txAction) (txNext, error) {
	var inProgress *types.TransactionInProgressException
	if errors.As(err, &inProgress) {
		return confirm, nil
	}
	var canceled *types.TransactionCanceledException
	if !errors.As(err, &canceled) {
		var api smithy.APIError
		if errors.As(err, &api) && api.ErrorFault() == smithy.FaultClient && !throttlingCodes[api.ErrorCode()] {
			return giveUp, Fail(op, err) // refused as sent: a validation error, a mismatch
		}
		return confirm, nil // a timeout, a lost reply, a server error, throttling: it may have committed
	}
	conflict := false
	for i, r := range canceled.CancellationReasons {
		switch aws.ToString(r.Code) {
		case "ConditionalCheckFailed":
			if i < len(actions) && actions[i].failed != nil {
				return giveUp, actions[i].failed(r.Item)
			}
			return giveUp, errs.Wrap(op, errs.Conflict, "the change conflicts with the current state", err)
		case "TransactionConflict":
			conflict = true
		case "ThrottlingError", "ProvisionedThroughputExceeded":
			return giveUp, errs.Wrap(op, errs.Throttled, "DynamoDB is throttling requests; retry later", err)
		}
	}
	if conflict {
		return startOver, nil
	}
	return giveUp, Fail(op, err)
}

// requestToken returns a fresh idempotency token (DynamoDB takes 1-36 characters).
func requestToken() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Building blocks of write actions. Every action is conditioned on its item:
// absent for a put, present otherwise (and, with onlyIf, owned).

var (
	itemExists = expression.AttributeExists(expression.Name(AttrPK))
	itemAbsent = expression.AttributeNotExists(expression.Name(AttrPK))
)

// put adds item if no item with its key exists; failed receives the
// existing item otherwise.
func (s *Store) put(item map[string]types.AttributeValue, failed func(map[string]types.AttributeValue) error) txAction {
	return txAction{put: item, cond: itemAbsent, failed: failed}
}

// addCount adds delta to a counter of an existing item.
func (s *Store) addCount(pk, sk, counter string, delta int, failed func(map[string]types.AttributeValue) error) txAction {
	add := expression.Add(expression.Name(counter), expression.Value(delta))
	return txAction{key: Key{pk, sk}, update: &add, cond: itemExists, failed: failed}
}

// remove deletes an existing item.
func (s *Store) remove(pk, sk string, failed func(map[string]types.AttributeValue) error) txAction {
	return txAction{key: Key{pk, sk}, delete: true, cond: itemExists, failed: failed}
}

// exists checks, without writing it, that an item exists.
func (s *Store) exists(pk, sk string, failed func(map[string]types.AttributeValue) error) txAction {
	return txAction{key: Key{pk, sk}, cond: itemExists, failed: failed}
}

// always makes a unconditional: it writes whether its item exists or not
// (an update then creates it).
func always(a txAction) txAction {
	a.cond = expression.ConditionBuilder{}
	return a
}

// onlyIf adds to a's condition that the item's attribute equals value.
func onlyIf(a txAction, attribute, value string) txAction {
	a.cond = a.cond.And(expression.Name(attribute).Equal(expression.Value(value)))
	return a
}

// asRead adds to cond that the item's attribute is as it was read: equal to
// value, or absent where value is "" (an item written before it had one).
func asRead(cond expression.ConditionBuilder, attribute, value string) expression.ConditionBuilder {
	if value == "" {
		return cond.And(expression.AttributeNotExists(expression.Name(attribute)))
	}
	return cond.And(expression.Name(attribute).Equal(expression.Value(value)))
}

// asVersion adds to cond that the item's version (v) is as it was read:
// version, or absent for 0.
func asVersion(cond expression.ConditionBuilder, version int64) expression.ConditionBuilder {
	if version == 0 {
		return cond.And(expression.AttributeNotExists(expression.Name("v")))
	}
	return cond.And(expression.Name("v").Equal(expression.Value(version)))
}

// published adds to a's condition that its post is published: status
// PUBLISHED, or none (posts written before drafts existed).
func published(a txAction) txAction {
	a.cond = a.cond.And(expression.Or(expression.AttributeNotExists(expression.Name("status")),
		expression.Name("status").Equal(expression.Value(StatusPublished))))
	return a
}

// notFoundOr returns a failure function: NotFound when the item was absent,
// otherwise the error of otherwise (nil means NotFound too).
func notFoundOr(op, missing string, otherwise error) func(map[string]types.AttributeValue) error {
	return func(old map[string]types.AttributeValue) error {
		if len(old) == 0 || otherwise == nil {
			return errs.E(op, errs.NotFound, missing)
		}
		return otherwise
	}
}

// maxBatchWrite is the most put requests one BatchWriteItem takes.
const maxBatchWrite = 25

// writeReserve is the least time before the deadline in which a BatchWriteItem
// is still sent.
const writeReserve = 200 * time.Millisecond

// maxConcurrentWrites bounds the BatchWriteItem requests in flight at once.
const maxConcurrentWrites = 8

// BatchWrite sends writes with BatchWriteItem, 25 a request and up to
// maxConcurrentWrites requests at a time, retrying UnprocessedItems with
// jittered backoff until every write is done or the context's deadline is
// near (Throttled then: the writes not done are not done).
func (s *Store) BatchWrite(ctx context.Context, op string, writes []types.WriteRequest) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		sem      = make(chan struct{}, maxConcurrentWrites)
	)
	for start := 0; start < len(writes); start += maxBatchWrite {
		chunk := writes[start:min(start+maxBatchWrite, len(writes))]
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := s.batchWriteChunk(ctx, op, chunk, deadline); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// batchWriteChunk sends at most 25 writes, retrying UnprocessedItems.
func (s *Store) batchWriteChunk(ctx context.Context, op string, chunk []types.WriteRequest, deadline time.Time) error {
	pending := map[string][]types.WriteRequest{s.table: chunk}
	for attempt := 0; len(pending[s.table]) > 0; attempt++ {
		if attempt == 0 && time.Until(deadline) < writeReserve {
			return errs.E(op, errs.Throttled, "out of time before every write was sent; retry later")
		}
		if attempt > 0 {
			wait := backoff(attempt)
			if time.Until(deadline) < wait+backoffBase {
				return errs.E(op, errs.Throttled, "DynamoDB left writes unprocessed until the deadline; retry later")
			}
			if err := sleep(ctx, wait); err != nil {
				return errs.Wrap(op, errs.Throttled, "out of time; retry later", err)
			}
		}
		out, err := s.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
		if err != nil {
			return Fail(op, err)
		}
		pending = out.UnprocessedItems
	}
	return nil
}

// errExists marks a put that found its item already there.
var errExists = errors.New("item exists")
