package feed

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The pull mode (the hybrid fan-out): an author whose followers are too many
// to copy each post to is marked pulled; the projector writes no entries
// for their posts, and a reader's feed reads them at read time from the
// pull markers in its partition, with the counters indexed by publication.

// pullThreshold is the follower count above which an author's posts are no
// longer fanned out to the followers' feeds: their feeds read the author's
// posts at read time instead (see Feed). A fan-out costs one write unit
// and a 25th of a BatchWriteItem per follower; at 10,000 it is 400 requests,
// a second or two of one projector invocation, and past it one post's
// fan-out would take a good part of the function's 60 s (100,000: 4,000
// requests; make bench measures them).
const pullThreshold = 10000

// Reach is what the projector reads of an author to choose between fanning
// out and being read at read time.
type Reach struct {
	Followers int
	Pulled    bool // marked read at read time (once marked, it stays)
}

// Reach reads the author's follower count and mark: one strongly
// consistent Query of its counter and profile (the count is their sum, as
// for every read of counts).
func (t *Table) Reach(ctx context.Context, authorID string) (Reach, error) {
	const op = "feed.Reach"
	if err := store.CheckIDs(op, authorID); err != nil {
		return Reach{}, err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), ConsistentRead: aws.Bool(true)}
	cond := keyIs(store.AttrPK, store.UserPK(authorID)).And(expression.Key(store.AttrSK).Between(expression.Value(store.SKCount), expression.Value(store.SKMetadata)))
	if err := keyQuery(in, cond, []string{store.AttrSK, "followerCount", "pulled", "hot"}); err != nil {
		return Reach{}, err
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return Reach{}, store.Fail(op, err)
	}
	var r Reach
	for _, item := range out.Items {
		var c struct {
			FollowerCount int                         `dynamodbav:"followerCount"`
			Pulled        bool                        `dynamodbav:"pulled"`
			Hot           map[string]store.ShardTally `dynamodbav:"hot"` // a hot user's shards' counts
		}
		if err := attributevalue.UnmarshalMap(item, &c); err != nil {
			return Reach{}, errs.Wrap(op, errs.Internal, "internal error", err)
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
func (t *Table) MarkPulled(ctx context.Context, authorID string) error {
	const op = "feed.MarkPulled"
	if err := store.CheckIDs(op, authorID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name("pulled"), expression.Value(true))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.table), Key: store.Key{PK: store.UserPK(authorID), SK: store.SKCount}.Attributes(),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err != nil {
		return store.Fail(op, err)
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
func (t *Table) IndexCounters(ctx context.Context, authorID string, posts []Entry) error {
	const op = "feed.IndexCounters"
	if err := store.CheckIDs(op, authorID); err != nil {
		return err
	}
	failed := make([]error, len(posts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(indexWorkers, len(posts)) {
		wg.Go(func() {
			for i := range next {
				failed[i] = t.indexCounter(ctx, op, authorID, posts[i])
			}
		})
	}
	for i := range posts {
		next <- i
	}
	close(next)
	wg.Wait()
	return cmp.Or(failed...)
}

func (t *Table) indexCounter(ctx context.Context, op, authorID string, p Entry) error {
	if err := store.CheckIDs(op, p.PostID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name(store.AttrGSI1PK), expression.Value(store.AuthorPK(authorID))).
		Set(expression.Name(store.AttrGSI1SK), expression.Value(CountedSK(p.Place)))
	cond := expression.AttributeExists(expression.Name(store.AttrPK)).And(expression.Name("authorId").Equal(expression.Value(authorID)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = t.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.table), Key: store.Key{PK: store.PostPK(p.PostID), SK: store.SKCount}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // no counter: the post is gone, or older than counters
	}
	if err != nil {
		return store.Fail(op, err)
	}
	return nil
}

// PutPullMarkers records in each reader's feed that it reads the author's
// posts at read time.
func (t *Table) PutPullMarkers(ctx context.Context, authorID string, readers []string) error {
	const op = "feed.PutPullMarkers"
	writes := make([]types.WriteRequest, len(readers))
	for i, r := range readers {
		if err := store.CheckIDs(op, r, authorID); err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			store.AttrPK: str(PK(r)), store.AttrSK: str(PullSK(authorID)), "authorId": str(authorID)}}}
	}
	return t.s.BatchWrite(ctx, op, writes)
}

// DeletePullMarker removes the reader's marker of the author (if any).
func (t *Table) DeletePullMarker(ctx context.Context, readerID, authorID string) error {
	const op = "feed.DeletePullMarker"
	if err := store.CheckIDs(op, readerID, authorID); err != nil {
		return err
	}
	return t.s.BatchWrite(ctx, op, []types.WriteRequest{deleteRequest(store.Key{PK: PK(readerID), SK: PullSK(authorID)})})
}

// keyQuery fills in's key condition, and its projection of attrs (nil for
// every attribute), as the SDK's expression builder writes them (as the
// store's queries: a placeholder for every name and value).
func keyQuery(in *dynamodb.QueryInput, cond expression.KeyConditionBuilder, attrs []string) error {
	b := expression.NewBuilder().WithKeyCondition(cond)
	if len(attrs) > 0 {
		var names []expression.NameBuilder
		for i, a := range attrs {
			if !slices.Contains(attrs[:i], a) { // each once
				names = append(names, expression.Name(a))
			}
		}
		b = b.WithProjection(expression.NamesList(names[0], names[1:]...))
	}
	expr, err := b.Build()
	if err != nil {
		return errs.Wrap("feed.keyQuery", errs.Internal, "internal error", err)
	}
	in.KeyConditionExpression, in.ProjectionExpression = expr.KeyCondition(), expr.Projection()
	in.ExpressionAttributeNames, in.ExpressionAttributeValues = expr.Names(), expr.Values()
	return nil
}

// keyIs is the key condition attr = value.
func keyIs(attr, value string) expression.KeyConditionBuilder {
	return expression.Key(attr).Equal(expression.Value(value))
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// stringAttr is the value of the item's string attribute name ("" when it
// has none, or it is not a string).
func stringAttr(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}
