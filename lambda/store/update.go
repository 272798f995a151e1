package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// updateExpr collects the SET and REMOVE clauses of an UpdateItem.
type updateExpr struct {
	sets, removes []string
	names         map[string]string
	values        map[string]types.AttributeValue
}

// set assigns value to attribute; a nil value leaves the attribute alone.
func (u *updateExpr) set(attribute string, value *string) {
	if value == nil {
		return
	}
	n := u.name(attribute)
	v := fmt.Sprintf(":v%d", len(u.values))
	if u.values == nil {
		u.values = map[string]types.AttributeValue{}
	}
	u.values[v] = str(*value)
	u.sets = append(u.sets, n+" = "+v)
}

func (u *updateExpr) remove(attribute string) { u.removes = append(u.removes, u.name(attribute)) }

func (u *updateExpr) name(attribute string) string {
	if u.names == nil {
		u.names = map[string]string{}
	}
	n := fmt.Sprintf("#a%d", len(u.names))
	u.names[n] = attribute
	return n
}

func (u *updateExpr) String() string {
	var b strings.Builder
	if len(u.sets) > 0 {
		b.WriteString("SET " + strings.Join(u.sets, ", "))
	}
	if len(u.removes) > 0 {
		b.WriteString(" REMOVE " + strings.Join(u.removes, ", "))
	}
	return strings.TrimSpace(b.String())
}

// update applies upd to the existing item at key, if its ownerAttr equals
// owner (when ownerAttr is set), and decodes the new item into v. One
// UpdateItem. When the item is absent it returns notFound; when it exists but
// has another owner, notOwner.
func (s *Store) update(ctx context.Context, op string, key itemKey, upd updateExpr, ownerAttr, owner string, notFound, notOwner error, v any) error {
	expr := upd.String()
	if len(upd.sets) == 0 && len(upd.removes) == 0 {
		return errs.E(op, errs.Validation, "nothing to update")
	}
	cond := "attribute_exists(pk)"
	if ownerAttr != "" {
		cond += " AND #owner = :owner"
		upd.names["#owner"] = ownerAttr
		if upd.values == nil {
			upd.values = map[string]types.AttributeValue{}
		}
		upd.values[":owner"] = str(owner)
	}
	out, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                           aws.String(s.table),
		Key:                                 key.attributes(),
		UpdateExpression:                    aws.String(expr),
		ConditionExpression:                 aws.String(cond),
		ExpressionAttributeNames:            upd.names,
		ExpressionAttributeValues:           upd.values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		if len(ccf.Item) > 0 && notOwner != nil {
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

// deletePartition deletes every item of partition pk whose sort key starts
// with skPrefix: Query pages of keys only (up to 1 MB each), deleted by
// BatchWriteItem, several requests at a time. It stops, with a Throttled
// error, when the deadline is near: what it has not deleted is left for the
// next call, which starts over from the partition's first remaining item.
func (s *Store) deletePartition(ctx context.Context, op, pk, skPrefix string) error {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK, "#sk": AttrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk), ":sk": str(skPrefix)},
		ProjectionExpression:      aws.String("#pk, #sk"),
		ConsistentRead:            aws.Bool(true),
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
		deletes := make([]types.WriteRequest, len(out.Items))
		for i, item := range out.Items {
			deletes[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: item}}
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
