package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// A caller's write budget. AppSync has no alias limit and invokes the
// Lambda once per mutation field, so one request may carry as many writes
// as the resolver count limit allows (5,000); WAF's rate limit counts
// requests, not what is in them. ChargeWrite counts a caller's writes per
// minute on an item of its own partition, and refuses past the budget.

// budgetTTL is how long a minute's count is kept (the table's TTL deletes
// it within a day or two of that).
const budgetTTL = time.Hour

// ChargeWrite counts one write by callerID in the current minute and
// refuses it, Throttled, when perMinute were counted already: one
// UpdateItem of a few-byte item in the caller's partition (writesSK),
// conditioned on its count being under the budget (a refusal costs the same
// write unit). A failure to count is the write's failure too: nothing is
// written unless it was counted.
func (s *Store) ChargeWrite(ctx context.Context, callerID string, perMinute int) error {
	const op = "store.ChargeWrite"
	if err := CheckIDs(op, callerID); err != nil {
		return err
	}
	minute := s.now().UTC().Truncate(time.Minute)
	upd := expression.Add(expression.Name("writes"), expression.Value(1)).
		Set(expression.Name("ttl"), expression.Value(minute.Add(budgetTTL).Unix()))
	cond := expression.Or(expression.AttributeNotExists(expression.Name("writes")), expression.Name("writes").LessThan(expression.Value(perMinute)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: Key{UserPK(callerID), writesSK(minute)}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errs.E(op, errs.Throttled, fmt.Sprintf("more than %d writes a minute by this caller; retry in a minute", perMinute))
	}
	if err != nil {
		return Fail(op, err)
	}
	return nil
}
