package store

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// The pull mode (the hybrid fan-out): an author whose followers are too many
// to copy each post to is marked pulled; the projector writes no entries
// for their posts, and a reader's feed reads them at read time from the
// pull markers in its partition, with the counters indexed by publication.

// PullThreshold is the follower count above which an author's posts are no
// longer fanned out to the followers' feeds: their feeds read the author's
// posts at read time instead (see Feed). A fan-out costs one write unit
// and a 25th of a BatchWriteItem per follower; at 10,000 it is 400 requests,
// a second or two of one projector invocation, and past it one post's
// fan-out would take a good part of the function's 60 s (100,000: 4,000
// requests; make bench measures them).
const PullThreshold = 10000

// maxPulled is how many high-follower authors one feed merges at read time,
// one Query each in the page's second round trip: the first maxPulled the
// reader follows, by author ID. Past it, the others' posts are not in the
// feed (they stay on the authors' own pages).
const maxPulled = 50

// AuthorReach is what the projector reads of an author to choose between
// fanning out and being read at read time.
type AuthorReach struct {
	Followers int
	Pulled    bool // marked read at read time (once marked, it stays)
}

// Reach reads the author's follower count and mark: one strongly
// consistent Query of its counter and profile (the count is their sum, as
// for every read of counts).
func (s *Store) Reach(ctx context.Context, authorID string) (AuthorReach, error) {
	const op = "store.Reach"
	if err := checkIDs(op, authorID); err != nil {
		return AuthorReach{}, err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)}
	if err := keyQuery(in, countedItems(UserPK(authorID)), []string{AttrSK, "followerCount", "pulled", "hot"}); err != nil {
		return AuthorReach{}, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return AuthorReach{}, Fail(op, err)
	}
	var r AuthorReach
	for _, item := range out.Items {
		var c struct {
			FollowerCount int                   `dynamodbav:"followerCount"`
			Pulled        bool                  `dynamodbav:"pulled"`
			Hot           map[string]ShardTally `dynamodbav:"hot"` // a hot user's shards' counts
		}
		if err := unmarshal(op, item, &c); err != nil {
			return AuthorReach{}, err
		}
		r.Followers += c.FollowerCount
		for _, t := range c.Hot {
			r.Followers += t.Followers
		}
		r.Pulled = r.Pulled || c.Pulled
	}
	return r, nil
}

// MarkPulled marks the author as read at read time (on its counter item).
func (s *Store) MarkPulled(ctx context.Context, authorID string) error {
	const op = "store.MarkPulled"
	if err := checkIDs(op, authorID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name("pulled"), expression.Value(true))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: Key{UserPK(authorID), SKCount}.Attributes(),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err != nil {
		return Fail(op, err)
	}
	return nil
}

// indexWorkers is how many UpdateItems IndexCounters keeps in flight.
const indexWorkers = 8

// IndexCounters puts the counters of the author's published posts (by place
// and ID; the entries' readers are not used) on GSI1 beside the posts, under
// CountedSK, so that a feed reading the author at read time reads their
// counts in the same round trip as the posts. Each is one UpdateItem of the
// counter (a write unit, and one more on GSI1), conditioned on the counter
// being there with that author: a post deleted meanwhile, or older than
// counters, is left as it is, and a feed reads its counts in a third round
// trip. Setting the same keys again writes the same item.
func (s *Store) IndexCounters(ctx context.Context, authorID string, posts []FeedEntry) error {
	const op = "store.IndexCounters"
	if err := checkIDs(op, authorID); err != nil {
		return err
	}
	failed := make([]error, len(posts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(indexWorkers, len(posts)) {
		wg.Go(func() {
			for i := range next {
				failed[i] = s.indexCounter(ctx, op, authorID, posts[i])
			}
		})
	}
	for i := range posts {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) indexCounter(ctx context.Context, op, authorID string, p FeedEntry) error {
	if err := checkIDs(op, p.PostID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name(AttrGSI1PK), expression.Value(AuthorPK(authorID))).
		Set(expression.Name(AttrGSI1SK), expression.Value(CountedSK(p.Place)))
	cond := itemExists.And(expression.Name("authorId").Equal(expression.Value(authorID)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: Key{PostPK(p.PostID), SKCount}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // no counter: the post is gone, or older than counters
	}
	if err != nil {
		return Fail(op, err)
	}
	return nil
}

// countersBefore reads, on GSI1, the counters that IndexCounters put there
// of the posts postsBefore reads (up to limit), by post ID.
func (s *Store) countersBefore(ctx context.Context, authorID, place string, limit int) (map[string]Post, error) {
	const op = "store.Feed"
	lo, hi := s.feedWindow()
	if place != "" {
		hi = place
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit))}
	cond := partition(AttrGSI1PK, AuthorPK(authorID)).And(expression.Key(AttrGSI1SK).Between(expression.Value(CountedSK(lo)), expression.Value(CountedSK(hi))))
	if err := keyQuery(in, cond, append([]string{AttrPK}, withTallies(postCounts)...)); err != nil {
		return nil, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, Fail(op, err)
	}
	counters := make(map[string]Post, len(out.Items))
	for _, item := range out.Items {
		var c Post
		if err := unmarshal(op, item, &c); err != nil {
			return nil, err
		}
		counters[strings.TrimPrefix(stringAttr(item, AttrPK), prefixPost)] = c
	}
	return counters, nil
}

// PutPullMarkers records in each reader's feed that it reads the author's
// posts at read time.
func (s *Store) PutPullMarkers(ctx context.Context, authorID string, readers []string) error {
	const op = "store.PutPullMarkers"
	writes := make([]types.WriteRequest, len(readers))
	for i, r := range readers {
		if err := checkIDs(op, r, authorID); err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			AttrPK: str(FeedPK(r)), AttrSK: str(PullSK(authorID)), "authorId": str(authorID)}}}
	}
	return s.batchWrite(ctx, op, writes)
}

// DeletePullMarker removes the reader's marker of the author (if any).
func (s *Store) DeletePullMarker(ctx context.Context, readerID, authorID string) error {
	const op = "store.DeletePullMarker"
	if err := checkIDs(op, readerID, authorID); err != nil {
		return err
	}
	return s.batchWrite(ctx, op, []types.WriteRequest{deleteRequest(Key{FeedPK(readerID), PullSK(authorID)})})
}
