package store

import (
	"context"
	"errors"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Editing one item: an UpdateItem conditioned on the item and its owner,
// answered with the item as it is after.

// changes collects what an UpdateItem sets and removes.
type changes struct {
	update expression.UpdateBuilder
	n      int
}

// set assigns value to attribute; a nil value leaves the attribute alone.
func (c *changes) set(attribute string, value *string) {
	if value != nil {
		c.update, c.n = c.update.Set(expression.Name(attribute), expression.Value(*value)), c.n+1
	}
}

// setFields sets, for each field of edit (a struct of pointers) that is
// not nil, the attribute its dynamodbav tag names to what it points to.
func (c *changes) setFields(edit any) {
	v := reflect.ValueOf(edit)
	for i := range v.NumField() {
		if f := v.Field(i); !f.IsNil() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("dynamodbav"), ",")
			c.update, c.n = c.update.Set(expression.Name(name), expression.Value(f.Elem().Interface())), c.n+1
		}
	}
}

// bump adds 1 to the item's version (v).
func (c *changes) bump() {
	c.update = c.update.Add(expression.Name("v"), expression.Value(1))
}

func (c *changes) remove(attribute string) {
	c.update, c.n = c.update.Remove(expression.Name(attribute)), c.n+1
}

// update applies c to the existing item at key if its ownerAttr equals owner
// (when set) and decodes the new item into v: one UpdateItem. notFound when
// absent or someone else's draft; notOwner when another's.
func (s *Store) update(ctx context.Context, op string, key Key, c changes, ownerAttr, owner string, notFound, notOwner error, v any) error {
	if c.n == 0 {
		return errs.E(op, errs.Validation, "nothing to update")
	}
	cond := itemExists
	if ownerAttr != "" {
		cond = cond.And(expression.Name(ownerAttr).Equal(expression.Value(owner)))
	}
	expr, err := expression.NewBuilder().WithUpdate(c.update).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	out, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 key.Attributes(),
		UpdateExpression:                    expr.Update(),
		ConditionExpression:                 expr.Condition(),
		ExpressionAttributeNames:            expr.Names(),
		ExpressionAttributeValues:           expr.Values(),
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if s, ok := ccf.Item["status"].(*types.AttributeValueMemberS); len(ccf.Item) > 0 && notOwner != nil && !(ok && s.Value == StatusDraft) {
			return notOwner
		}
		return notFound
	}
	if err != nil {
		return Fail(op, err)
	}
	return unmarshal(op, out.Attributes, v)
}
