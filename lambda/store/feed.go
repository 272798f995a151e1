package store

import (
	"context"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// The feed. A reader's feed is a partition of entries (FeedPK), one per
// published post of a user the reader follows, written by the projector from
// the table's stream (lambda/projector) and read by Feed. An entry holds
// only what finds its post (its ID, its author); the post itself is read
// with the page, so that a post's update, comment or like costs no write in
// its readers' feeds.

// FeedTTL is how long an entry stays: DynamoDB's TTL deletes it after that
// (within a few days more). A feed lists the posts of the last 30 days.
const FeedTTL = 30 * 24 * time.Hour

// FollowBackfill is how many of a user's latest posts a new follow brings
// into the follower's feed: one full page of it, so that a new follow shows
// at once; older ones the follower finds on the user's own page.
const FollowBackfill = 20

// The feed projector's event source (the stack deploys it, and make dev's
// poller applies it): up to FeedStreamBatchSize records an invocation, a
// failed batch bisected and retried FeedStreamRetries times, then left to
// the on-failure destination; and FeedStreamFilters, its filter criteria,
// as Lambda's event filtering reads them (one pattern per filter; a record
// matching any is delivered): a post's own item, and a follow. The rest
// (comments, likes, counters, profiles, the feed's own entries and their TTL
// deletions) never invoke the projector.
const (
	FeedStreamBatchSize = 100
	FeedStreamRetries   = 5
)

var FeedStreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		AttrPK: map[string]any{"S": []any{map[string]any{"prefix": prefixPost}}},
		AttrSK: map[string]any{"S": []any{SKMetadata}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{
		AttrPK: map[string]any{"S": []any{map[string]any{"prefix": prefixUser}}},
		AttrSK: map[string]any{"S": []any{map[string]any{"prefix": prefixFollows}}},
	}}},
}

// FeedEntry is one post in one reader's feed.
type FeedEntry struct {
	Reader   string `dynamodbav:"-"`
	Place    string `dynamodbav:"-"` // the post's GSI1 sort key: PublishedSK(...)
	PostID   string `dynamodbav:"postId"`
	AuthorID string `dynamodbav:"authorId"`
	// Expires is the entry's TTL, in seconds since the epoch.
	Expires int64 `dynamodbav:"ttl"`
}

type feedItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	FeedEntry
}

func (e FeedEntry) key() itemKey { return itemKey{FeedPK(e.Reader), e.Place} }

// feedOf reads a reader's entries, newest first.
func feedOf(readerID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Query.feed", Parent: readerID}, pk: FeedPK(readerID), skPrefix: PostPrefix, newestFirst: true}
}

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

// FollowerIDs returns every follower of the user: Query pages of GSI2's keys.
func (s *Store) FollowerIDs(ctx context.Context, userID string) ([]string, error) {
	const op = "store.FollowerIDs"
	if err := checkIDs(op, userID); err != nil {
		return nil, err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI2)}
	if err := keyQuery(in, partition(AttrGSI2PK, FollowersPK(userID)), []string{AttrGSI2SK}); err != nil {
		return nil, err
	}
	var ids []string
	for {
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return nil, fail(op, err)
		}
		for _, item := range out.Items {
			if sk, ok := item[AttrGSI2SK].(*types.AttributeValueMemberS); ok {
				ids = append(ids, strings.TrimPrefix(sk.Value, prefixFollower))
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return ids, nil
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
	for {
		page, err := s.api.Query(ctx, in)
		if err != nil {
			return nil, fail(op, err)
		}
		for _, item := range page.Items {
			var p struct {
				Place string `dynamodbav:"gsi1sk"`
				ID    string `dynamodbav:"id"`
			}
			if err := unmarshal(op, item, &p); err != nil {
				return nil, err
			}
			out = append(out, FeedEntry{Place: p.Place, PostID: p.ID, AuthorID: authorID})
			if limit > 0 && len(out) == limit {
				return out, nil
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
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
		WithProjection(namesList([]string{AttrPK, AttrSK})).Build()
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	var out []FeedEntry
	for {
		page, err := s.api.Query(ctx, in)
		if err != nil {
			return nil, fail(op, err)
		}
		for _, item := range page.Items {
			if k, ok := keyOf(item); ok {
				out = append(out, FeedEntry{Reader: readerID, Place: k.sk, AuthorID: authorID})
			}
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out, nil
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}

// Follows reports whether followerID follows followedID (strongly
// consistent GetItem).
func (s *Store) Follows(ctx context.Context, followerID, followedID string) (bool, error) {
	const op = "store.Follows"
	if err := checkIDs(op, followerID, followedID); err != nil {
		return false, err
	}
	var f Follow
	return s.getConsistent(ctx, op, itemKey{UserPK(followerID), FollowsSK(followedID)}, &f)
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
	found, err := s.getConsistent(ctx, op, itemKey{PostPK(postID), SKCount}, &c)
	if err != nil || found {
		return found && c.Status != StatusDraft, err
	}
	var p Post
	found, err = s.getConsistent(ctx, op, itemKey{PostPK(postID), SKMetadata}, &p)
	return found && p.Published(), err
}

// Feed returns a page of the reader's feed (Query.feed): one Query of the
// reader's entries, newest first, then one BatchGetItem of their posts and
// of the reader's follows of their authors, sent together (two round
// trips). An entry whose post is gone or no longer published, or whose
// author the reader no longer follows, is left out at once, before the
// projector has removed it, and so is an expired one, before TTL does: the page may hold fewer posts than its limit,
// and its nextToken still resumes after the last entry read.
func (s *Store) Feed(ctx context.Context, readerID string, page PageRequest) (Page[Post], error) {
	const op = "store.Feed"
	q := feedOf(readerID)
	maxBytes := page.MaxBytes
	entriesReq := page
	entriesReq.Attributes, entriesReq.MaxBytes = []string{"postId", "authorId", "ttl"}, 0
	entries, err := queryPage[FeedEntry](ctx, s, q, entriesReq)
	if err != nil {
		return Page[Post]{}, err
	}
	keys := make([]itemKey, 0, 3*len(entries.Items))
	counts := selectsCount(page.Attributes, postCounts)
	now := s.now().Unix()
	for _, e := range entries.Items {
		if e.Expires < now {
			continue // expired: DynamoDB's TTL deletes it within days, not at once
		}
		keys = append(keys, itemKey{PostPK(e.PostID), SKMetadata}, itemKey{UserPK(readerID), FollowsSK(e.AuthorID)})
		if counts {
			keys = append(keys, itemKey{PostPK(e.PostID), SKCount})
		}
	}
	var attrs []string
	if page.Attributes != nil {
		attrs = append([]string{"id", "status", "authorId"}, page.Attributes...)
	}
	items, err := s.batchGet(ctx, op, keys, attrs)
	if err != nil {
		return Page[Post]{}, err
	}
	out := Page[Post]{Items: []Post{}}
	var kept []int // the entries of the posts kept
	for i, e := range entries.Items {
		if e.Expires < now {
			continue
		}
		item, ok := items[itemKey{PostPK(e.PostID), SKMetadata}]
		if _, follows := items[itemKey{UserPK(readerID), FollowsSK(e.AuthorID)}]; !ok || !follows {
			continue
		}
		var p Post
		if _, err := decodeCounted[Post](op, []map[string]types.AttributeValue{item, items[itemKey{PostPK(e.PostID), SKCount}]}, &p); err != nil {
			return Page[Post]{}, err
		}
		if !p.Published() || p.AuthorID != e.AuthorID {
			continue
		}
		readOnly(&p, attrs)
		out.Items = append(out.Items, p)
		kept = append(kept, i)
	}
	out.NextToken = entries.NextToken
	out.after = func(i int) (string, error) { return entries.after(kept[i]) }
	if maxBytes > 0 && len(out.Items) > 0 {
		return out.Cut(max(fitBytes(out.Items, maxBytes), 1))
	}
	return out, nil
}
