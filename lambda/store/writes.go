package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// What the writes share (users.go, posts.go, comments.go, follows.go,
// likes.go). Each is atomic: one conditional UpdateItem, or one
// TransactWriteItems that writes a child and adjusts its parent's count, on
// the parent's counter item, together (see transact and counts.go).
// Ownership is a condition of the write itself; a write that reads first
// (to find its item's partition, or to return what it removes) is
// conditioned on what it read. Their errors: Validation (an ID or handle
// that may not go into a key), NotFound, Unauthorized (not the owner),
// Conflict, Throttled, Internal.

func marshal(op string, v any) (map[string]types.AttributeValue, error) {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return av, nil
}

func unmarshal(op string, item map[string]types.AttributeValue, v any) error {
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return nil
}

const (
	countUp   = 1
	countDown = -1
)

// GetConsistent reads one item with a strongly consistent GetItem into v and
// reports whether it exists.
func (s *Store) GetConsistent(ctx context.Context, op string, key Key, v any) (bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key.Attributes(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, Fail(op, err)
	}
	if out.Item == nil {
		return false, nil
	}
	return true, unmarshal(op, out.Item, v)
}
