package store

import (
	"context"

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
	writes := make([]types.WriteRequest, len(items))
	for i, it := range items {
		av, err := marshal(op, it)
		if err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.batchWrite(ctx, op, writes)
}

// batchWrite sends writes with BatchWriteItem, 25 a request, retrying
// UnprocessedItems with jittered backoff.
func (s *Store) batchWrite(ctx context.Context, op string, writes []types.WriteRequest) error {
	for start := 0; start < len(writes); start += maxBatchWrite {
		pending := map[string][]types.WriteRequest{s.table: writes[start:min(start+maxBatchWrite, len(writes))]}
		for attempt := 0; len(pending[s.table]) > 0; attempt++ {
			if attempt > 0 {
				if err := sleep(ctx, backoff(attempt)); err != nil {
					return errs.Wrap(op, errs.Internal, "internal error", err)
				}
			}
			out, err := s.api.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: pending})
			if err != nil {
				return fail(op, err)
			}
			pending = out.UnprocessedItems
		}
	}
	return nil
}
