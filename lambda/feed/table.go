package feed

import (
	"cmp"
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Table is the feed's items in the table, read and written through the
// store s (whose posts, follows and counts are the core's). It is safe for
// concurrent use.
type Table struct {
	s     *store.Store
	api   store.API
	table string
}

// NewTable returns the feed's items of s's table.
func NewTable(s *store.Store) *Table { return &Table{s: s, api: s.API(), table: s.Table()} }

// Entry is one post in one reader's feed. An entry holds only what finds
// its post (its ID, its author): the post itself is read with the page, so
// that a post's update, comment or like costs no write in its readers'
// feeds.
type Entry struct {
	Reader   string `dynamodbav:"-"`
	Place    string `dynamodbav:"-"` // the post's GSI1 sort key: store.PublishedSK(...)
	PostID   string `dynamodbav:"postId"`
	AuthorID string `dynamodbav:"authorId"`
	// Expires is the entry's TTL, in seconds since the epoch.
	Expires int64 `dynamodbav:"ttl"`
}

// Item is the entry as the table holds it, for store.Dataset's Items (a
// Place of PullSK is a pull marker).
func (e Entry) Item() any {
	return struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
		Entry
	}{PK(e.Reader), e.Place, e}
}

func (e Entry) key() store.Key { return store.Key{PK: PK(e.Reader), SK: e.Place} }

// PutEntries writes the entries (BatchWriteItem, 25 a request; the same
// entry written again is the same item).
func (t *Table) PutEntries(ctx context.Context, entries []Entry) error {
	const op = "feed.PutEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := store.CheckIDs(op, e.Reader, e.PostID, e.AuthorID); err != nil {
			return err
		}
		av, err := attributevalue.MarshalMap(e.Item())
		if err != nil {
			return errs.Wrap(op, errs.Internal, "internal error", err)
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return t.s.BatchWrite(ctx, op, writes)
}

// DeleteEntries deletes the entries (absent ones are no error).
func (t *Table) DeleteEntries(ctx context.Context, entries []Entry) error {
	const op = "feed.DeleteEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := store.CheckIDs(op, e.Reader); err != nil {
			return err
		}
		writes[i] = deleteRequest(e.key())
	}
	return t.s.BatchWrite(ctx, op, writes)
}

func deleteRequest(k store.Key) types.WriteRequest {
	return types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: k.Attributes()}}
}

// PublishedSince returns the places (GSI1 sort keys) and IDs of the author's
// posts published after since, newest first, at most limit (0: all).
func (t *Table) PublishedSince(ctx context.Context, authorID string, since time.Time, limit int) ([]Entry, error) {
	const op = "feed.PublishedSince"
	if err := store.CheckIDs(op, authorID); err != nil {
		return nil, err
	}
	lo, hi := placesSince(since)
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), IndexName: aws.String(store.GSI1), ScanIndexForward: aws.Bool(false)}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	cond := keyIs(store.AttrGSI1PK, store.AuthorPK(authorID)).And(expression.Key(store.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi)))
	if err := keyQuery(in, cond, []string{store.AttrGSI1SK, "id", "createdAt"}); err != nil {
		return nil, err
	}
	var out []Entry
	var bad error
	err := t.s.QueryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		var p struct {
			Place string `dynamodbav:"gsi1sk"`
			ID    string `dynamodbav:"id"`
		}
		if err := attributevalue.UnmarshalMap(item, &p); err != nil {
			bad = errs.Wrap(op, errs.Internal, "internal error", err)
			return false
		}
		out = append(out, Entry{Place: p.Place, PostID: p.ID, AuthorID: authorID})
		return limit == 0 || len(out) < limit
	})
	return out, cmp.Or(bad, err)
}

// EntriesBy returns the entries of the author's posts in the reader's
// feed: Query pages of the whole feed (what an unfollow must take out is
// what the feed holds, not what the author has now), filtered on authorId.
func (t *Table) EntriesBy(ctx context.Context, readerID, authorID string) ([]Entry, error) {
	const op = "feed.EntriesBy"
	if err := store.CheckIDs(op, readerID, authorID); err != nil {
		return nil, err
	}
	expr, err := expression.NewBuilder().WithKeyCondition(keyIs(store.AttrPK, PK(readerID))).
		WithFilter(expression.Name("authorId").Equal(expression.Value(authorID))).
		WithProjection(expression.NamesList(expression.Name(store.AttrPK), expression.Name(store.AttrSK), expression.Name("postId"))).Build()
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	var out []Entry
	err = t.s.QueryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		if sk := stringAttr(item, store.AttrSK); sk != "" {
			out = append(out, Entry{Reader: readerID, Place: sk, PostID: stringAttr(item, "postId"), AuthorID: authorID})
		}
		return true
	})
	return out, err
}
