// Package budget is the write budget feature: each caller's mutations a
// minute, past which they are refused (Throttled, nothing written).
// AppSync has no alias limit and invokes the Lambda once per mutation
// field, so one request may carry as many writes as the resolver count
// limit allows (5,000); WAF's rate limit counts requests, not what is in
// them (docs/limits.md).
//
// Wired in by a line in lambda/cmd/resolver (its WRITES_PER_MINUTE), the
// stack (infra/apistack/features.go sets it) and make dev
// (local/devserver); docs/layout.md says how to leave it out.
package budget

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// WritesPerMinute is each caller's mutations a minute past which the
// function refuses them, as the stack sets it (WRITES_PER_MINUTE) and make
// dev applies it: a person writes far fewer, and one request of 5,000
// aliased mutations is cut to this many writes.
const WritesPerMinute = 120

// Environment is the variable the function reads its budget from
// (FromEnvironment).
const Environment = "WRITES_PER_MINUTE"

// Deployed is the environment the stack sets on the function: a budget of
// WritesPerMinute.
var Deployed = map[string]string{Environment: strconv.Itoa(WritesPerMinute)}

// ttl is how long a minute's count is kept (the table's TTL deletes it
// within a day or two of that).
const ttl = time.Hour

// Budget counts callers' writes in the table of a store.
type Budget struct {
	s         *store.Store
	perMinute int
}

// Setting is the budget a setting names whose zero value is the deployed
// one (make dev's): WritesPerMinute for 0, none (0) for a negative n.
func Setting(n int) int {
	if n == 0 {
		return WritesPerMinute
	}
	return max(n, 0)
}

// New returns the budget of perMinute writes a minute a caller (0: no
// budget, nothing counted).
func New(s *store.Store, perMinute int) *Budget { return &Budget{s: s, perMinute: perMinute} }

// FromEnvironment returns the budget Environment sets in getenv (unset or
// 0: none), or an error when it is not a count of writes.
func FromEnvironment(s *store.Store, getenv func(string) string) (*Budget, error) {
	n := 0
	if v := getenv(Environment); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 0 {
			return nil, fmt.Errorf("%s is not a count of writes: %s", Environment, v)
		}
	}
	return New(s, n), nil
}

// Charge counts one write by callerID in the current minute and refuses
// it, Throttled, when perMinute were counted already: one UpdateItem of a
// few-byte item in the caller's partition (SK), conditioned on its count
// being under the budget (a refusal costs the same write unit). A failure
// to count is the write's failure too: nothing is written unless it was
// counted.
func (b *Budget) Charge(ctx context.Context, callerID string) error {
	const op = "budget.Charge"
	if err := store.CheckIDs(op, callerID); err != nil {
		return err
	}
	minute := b.s.Now().UTC().Truncate(time.Minute)
	upd := expression.Add(expression.Name("writes"), expression.Value(1)).
		Set(expression.Name("ttl"), expression.Value(minute.Add(ttl).Unix()))
	cond := expression.Or(expression.AttributeNotExists(expression.Name("writes")), expression.Name("writes").LessThan(expression.Value(b.perMinute)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = b.s.API().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(b.s.Table()), Key: store.Key{PK: store.UserPK(callerID), SK: SK(minute)}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errs.E(op, errs.Throttled, fmt.Sprintf("more than %d writes a minute by this caller; retry in a minute", b.perMinute))
	}
	if err != nil {
		return store.Fail(op, err)
	}
	return nil
}

// SK is the sort key, in a caller's partition (store.UserPK), of its count
// of writes in the minute that starts at minute: "~WRITES#<YYYYMMDDHHMM>".
// "~" sorts after every other item of the partition, outside every range
// read there.
func SK(minute time.Time) string { return "~WRITES#" + minute.UTC().Format("200601021504") }

// Feature is the budget's part of the API: every mutation's events charged
// first (no route of its own).
func (b *Budget) Feature() resolver.Feature {
	return resolver.Feature{Mutations: b.charged}
}

// charged is resolve with each event's caller charged one write of the
// budget first: an event past it fails Throttled and is not resolved. An
// event without a user goes on (its mutation refuses it, Unauthorized).
func (b *Budget) charged(resolve resolver.Field) resolver.Field {
	if b.perMinute <= 0 {
		return resolve
	}
	return func(ctx context.Context, evs []*appsync.Event) []resolver.Result {
		out := make([]resolver.Result, len(evs))
		var pass []*appsync.Event
		var at []int
		for i, ev := range evs {
			if id := ev.Identity.UserID(); id != "" {
				if err := b.Charge(ctx, id); err != nil {
					out[i] = resolver.Result{Err: err}
					continue
				}
			}
			pass, at = append(pass, ev), append(at, i)
		}
		if len(pass) > 0 {
			for k, r := range resolve(ctx, pass) {
				out[at[k]] = r
			}
		}
		return out
	}
}
