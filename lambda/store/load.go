package store

import (
	"cmp"
	"context"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Loading a data set as it is (the sample data, tests): BatchWriteItem of
// 25 items, several requests at a time.

// Dataset is a set of entities to load as they are, counts included.
type Dataset struct {
	Users    []User
	Posts    []Post
	Comments []Comment
	Follows  []Follow
	Likes    []Like
	// Items are written as they are (marshalled with attributevalue): a
	// feature's own, such as the feed's entries (feed.Entry.Item).
	Items []any
}

// maxBatchWrite is the most put requests one BatchWriteItem takes.
const maxBatchWrite = 25

// Load writes every entity of d, with its counter and handle items, by
// BatchWriteItem. It seeds a table: it checks nothing and counts nothing,
// so d's counts must equal its children already.
func (s *Store) Load(ctx context.Context, d Dataset) error {
	const op = "store.Load"
	var items []any
	for _, u := range d.Users {
		items = append(items, newUserItem(u), newUserCounter(u), newHandleItem(u))
	}
	for _, p := range d.Posts {
		items = append(items, newPostItem(p), newPostCounter(p))
	}
	for _, c := range d.Comments {
		items = append(items, newCommentItem(c))
	}
	for _, f := range d.Follows {
		items = append(items, newFollowItem(f))
	}
	for _, l := range d.Likes {
		items = append(items, newLikeItem(l), newLikedItem(l))
	}
	items = append(items, d.Items...)
	writes := make([]types.WriteRequest, len(items))
	for i, it := range items {
		av, err := marshal(op, it)
		if err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.BatchWrite(ctx, op, writes)
}

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
