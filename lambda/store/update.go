package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

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

// bump adds 1 to the item's version (v).
func (c *changes) bump() {
	c.update = c.update.Add(expression.Name("v"), expression.Value(1))
}

func (c *changes) remove(attribute string) {
	c.update, c.n = c.update.Remove(expression.Name(attribute)), c.n+1
}

// update applies the changes to the existing item at key, if its ownerAttr
// equals owner (when ownerAttr is set), and decodes the new item into v. One
// UpdateItem. When the item is absent, or someone else's draft (absent to
// anyone but its owner), it returns notFound; when it exists but has another
// owner, notOwner.
func (s *Store) update(ctx context.Context, op string, key itemKey, c changes, ownerAttr, owner string, notFound, notOwner error, v any) error {
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
		Key:                                 key.attributes(),
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
		return fail(op, err)
	}
	return unmarshal(op, out.Attributes, v)
}

// sweepReserve is the time deletePartition keeps before the context's
// deadline: it starts no new page of deletes later than that.
const sweepReserve = 500 * time.Millisecond

// deletePartition deletes every item of the post's partition pk (what
// remains once the post and its counter are deleted: its comments and its
// likes, and with each like its guard in the liker's partition): Query
// pages of keys only (up to 1 MB each), deleted by BatchWriteItem, several
// requests at a time. It stops, with a Throttled error, when the deadline is
// near: what it has not deleted is left for the next call, which starts
// over from the partition's first remaining item.
func (s *Store) deletePartition(ctx context.Context, op, postID, pk string) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)}
	if err := keyQuery(in, partition(AttrPK, pk), []string{AttrPK, AttrSK, "userId"}); err != nil {
		return err
	}
	remain := errs.E(op, errs.Throttled, "the post was deleted but some of its comments remain: call deletePost again to remove them")
	for {
		if time.Until(deadline) < sweepReserve {
			return remain
		}
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return fail(op, err)
		}
		deletes := make([]types.WriteRequest, 0, len(out.Items))
		for _, item := range out.Items {
			key, ok := keyOf(item)
			if !ok {
				continue
			}
			if user, isLike := item["userId"].(*types.AttributeValueMemberS); isLike && strings.HasPrefix(key.sk, LikePrefix) {
				deletes = append(deletes, deleteRequest(itemKey{UserPK(user.Value), LikedSK(postID)}))
			}
			deletes = append(deletes, deleteRequest(key))
		}
		if err := s.batchWrite(ctx, op, deletes); errs.Is(err, errs.Throttled) {
			return remain
		} else if err != nil {
			return err
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

func deleteRequest(k itemKey) types.WriteRequest {
	return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.attributes()}}
}
