package store

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// The sweep of a deleted post: what remains in its partitions (comments,
// likes with their guards, shard counters' items) deleted page by page until
// the deadline nears; an interrupted sweep is finished by the next DeletePost.

// sweepReserve is the time deletePartition keeps before the context's
// deadline: it starts no new page of deletes later than that.
const sweepReserve = 500 * time.Millisecond

// deletePartition deletes what remains of post pk's partition (its comments,
// its likes with their guards): pages of keys, deleted by BatchWriteItem. It
// stops with Throttled near the deadline; the next call starts over.
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
			return Fail(op, err)
		}
		deletes := make([]types.WriteRequest, 0, len(out.Items))
		for _, item := range out.Items {
			key, ok := keyOf(item)
			if !ok {
				continue
			}
			if user, isLike := item["userId"].(*types.AttributeValueMemberS); isLike && strings.HasPrefix(key.SK, LikePrefix) {
				deletes = append(deletes, deleteRequest(Key{UserPK(user.Value), LikedSK(postID)}))
			}
			deletes = append(deletes, deleteRequest(key))
		}
		if err := s.BatchWrite(ctx, op, deletes); errs.Is(err, errs.Throttled) {
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

func deleteRequest(k Key) types.WriteRequest {
	return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.Attributes()}}
}

// sweepPost deletes what remains of the deleted post id: the items of its
// parts (its Spread's partitions, a hot post's shards), then of its own
// partition, where what marks its parts is, last, so that an interrupted
// sweep is finished by the next.
func (s *Store) sweepPost(ctx context.Context, op, id string, parts []string) error {
	for _, pk := range parts {
		if err := s.deletePartition(ctx, op, id, pk); err != nil {
			return err
		}
	}
	return s.deletePartition(ctx, op, id, PostPK(id))
}

// ErrSweepUnfinished comes, with the deleted post, from a DeletePost whose
// deletion committed but whose sweep did not finish: a later DeletePost of
// the same ID sweeps the rest.
var ErrSweepUnfinished = errors.New("the post is deleted; some of its comments and likes remain to be swept")
