package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Dataset is a set of entities to load as they are, counts included.
type Dataset struct {
	Users    []User
	Posts    []Post
	Comments []Comment
	Follows  []Follow
}

// maxBatchWrite is the most put requests one BatchWriteItem takes.
const maxBatchWrite = 25

// Load writes every entity of d (and each user's handle guard) with
// BatchWriteItem, 25 items a request, retrying UnprocessedItems. It is for
// seeding a table: it does not check uniqueness or maintain counts, so d must
// be consistent already (its counts equal to its children).
func (s *Store) Load(ctx context.Context, d Dataset) error {
	const op = "store.Load"
	var items []any
	for _, u := range d.Users {
		items = append(items, newUserItem(u), newHandleItem(u))
	}
	for _, p := range d.Posts {
		items = append(items, newPostItem(p))
	}
	for _, c := range d.Comments {
		items = append(items, newCommentItem(c))
	}
	for _, f := range d.Follows {
		items = append(items, newFollowItem(f))
	}
	for start := 0; start < len(items); start += maxBatchWrite {
		var puts []types.WriteRequest
		for _, it := range items[start:min(start+maxBatchWrite, len(items))] {
			av, err := attributevalue.MarshalMap(it)
			if err != nil {
				return errs.Wrap(op, errs.Internal, "internal error", err)
			}
			puts = append(puts, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		pending := map[string][]types.WriteRequest{s.table: puts}
		for attempt := 0; len(pending[s.table]) > 0; attempt++ {
			out, err := s.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fail(op, err)
			}
			pending = out.UnprocessedItems
			if len(pending[s.table]) > 0 && attempt > 0 {
				if err := sleep(ctx, backoff(attempt)); err != nil {
					return errs.Wrap(op, errs.Internal, "internal error", err)
				}
			}
		}
	}
	return nil
}
