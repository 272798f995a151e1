package store

import (
	"cmp"
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// What the projector reads and writes to keep the feeds (lambda/projector):
// entries put and deleted, a user's followers, an author's latest posts,
// and whether a follow or a published post still stands.

// PutFeedEntries writes the entries (BatchWriteItem, 25 a request; the same
// entry written again is the same item).
func (s *Store) PutFeedEntries(ctx context.Context, entries []FeedEntry) error {
	const op = "store.PutFeedEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := checkIDs(op, e.Reader, e.PostID, e.AuthorID); err != nil {
			return err
		}
		av, err := marshal(op, feedItem{PK: FeedPK(e.Reader), SK: e.Place, FeedEntry: e})
		if err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.batchWrite(ctx, op, writes)
}

// DeleteFeedEntries deletes the entries (absent ones are no error).
func (s *Store) DeleteFeedEntries(ctx context.Context, entries []FeedEntry) error {
	const op = "store.DeleteFeedEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := checkIDs(op, e.Reader); err != nil {
			return err
		}
		writes[i] = deleteRequest(e.key())
	}
	return s.batchWrite(ctx, op, writes)
}

// FollowerIDs returns every follower of the user: Query pages of GSI2's
// keys, of its shards too when it is hot (its marker, read first, says so).
func (s *Store) FollowerIDs(ctx context.Context, userID string) ([]string, error) {
	const op = "store.FollowerIDs"
	if err := checkIDs(op, userID); err != nil {
		return nil, err
	}
	var ids []string
	shards := 0
	for n := -1; n < shards; n++ {
		pk := FollowersPK(userID)
		if n >= 0 {
			pk = FollowersShardPK(userID, n)
		}
		in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI2)}
		if err := keyQuery(in, partition(AttrGSI2PK, pk), []string{AttrGSI2SK}); err != nil {
			return nil, err
		}
		err := s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
			switch sk := stringAttr(item, AttrGSI2SK); {
			case sk == hotFollowerSK:
				shards = HotShards
			case sk != "":
				ids = append(ids, strings.TrimPrefix(sk, prefixFollower))
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// queryAll runs in page after page, handing each item to each until each
// returns false or the range ends.
func (s *Store) queryAll(ctx context.Context, op string, in *dynamodb.QueryInput, each func(map[string]types.AttributeValue) bool) error {
	for {
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return Fail(op, err)
		}
		for _, item := range out.Items {
			if !each(item) {
				return nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// PublishedSince returns the places (GSI1 sort keys) and IDs of the author's
// posts published after since, newest first, at most limit (0: all).
func (s *Store) PublishedSince(ctx context.Context, authorID string, since time.Time, limit int) ([]FeedEntry, error) {
	const op = "store.PublishedSince"
	if err := checkIDs(op, authorID); err != nil {
		return nil, err
	}
	lo, hi := timeRange(PostPrefix, since, time.Time{})
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), ScanIndexForward: aws.Bool(false)}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	cond := partition(AttrGSI1PK, AuthorPK(authorID)).And(expression.Key(AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi)))
	if err := keyQuery(in, cond, []string{AttrGSI1SK, "id", "createdAt"}); err != nil {
		return nil, err
	}
	var out []FeedEntry
	var bad error
	err := s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		var p struct {
			Place string `dynamodbav:"gsi1sk"`
			ID    string `dynamodbav:"id"`
		}
		if bad = unmarshal(op, item, &p); bad != nil {
			return false
		}
		out = append(out, FeedEntry{Place: p.Place, PostID: p.ID, AuthorID: authorID})
		return limit == 0 || len(out) < limit
	})
	return out, cmp.Or(bad, err)
}

// FeedEntriesBy returns the entries of the author's posts in the reader's
// feed: Query pages of the whole feed (what an unfollow must take out is
// what the feed holds, not what the author has now), filtered on authorId.
func (s *Store) FeedEntriesBy(ctx context.Context, readerID, authorID string) ([]FeedEntry, error) {
	const op = "store.FeedEntriesBy"
	if err := checkIDs(op, readerID, authorID); err != nil {
		return nil, err
	}
	expr, err := expression.NewBuilder().WithKeyCondition(partition(AttrPK, FeedPK(readerID))).
		WithFilter(expression.Name("authorId").Equal(expression.Value(authorID))).
		WithProjection(namesList([]string{AttrPK, AttrSK, "postId"})).Build()
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	var out []FeedEntry
	err = s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		if k, ok := keyOf(item); ok {
			out = append(out, FeedEntry{Reader: readerID, Place: k.SK, PostID: stringAttr(item, "postId"), AuthorID: authorID})
		}
		return true
	})
	return out, err
}

// Follows reports whether followerID follows followedID (strongly
// consistent GetItem).
func (s *Store) Follows(ctx context.Context, followerID, followedID string) (bool, error) {
	const op = "store.Follows"
	if err := checkIDs(op, followerID, followedID); err != nil {
		return false, err
	}
	var f Follow
	return s.GetConsistent(ctx, op, Key{UserPK(followerID), FollowsSK(followedID)}, &f)
}

// PublishedPost reports whether the post exists and is published (strongly
// consistent GetItem of its counter, or of its own item for a post older
// than counters).
func (s *Store) PublishedPost(ctx context.Context, postID string) (bool, error) {
	const op = "store.PublishedPost"
	if err := checkIDs(op, postID); err != nil {
		return false, err
	}
	var c postCounterItem
	found, err := s.GetConsistent(ctx, op, Key{PostPK(postID), SKCount}, &c)
	if err != nil || found {
		return found && c.Status != StatusDraft, err
	}
	var p Post
	found, err = s.GetConsistent(ctx, op, Key{PostPK(postID), SKMetadata}, &p)
	return found && p.Published(), err
}
