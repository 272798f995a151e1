package store

import (
	"context"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// One Query of one partition: each connection's shape (which partition,
// index, sort-key range, order, and the scope its tokens are bound to), and
// queryPage, which reads a page of it.

// shaped returns q with the order and time range of page applied: the
// order reverses q's own when page asks for the other, and the range
// becomes a key condition on sort keys that are ULIDs of the creation time.
func (q partitionQuery) shaped(page PageRequest, extraArgs string) partitionQuery {
	if (page.Order == NewestFirst) == q.newestFirst {
		page.Order = defaultOrder // the query's own order, however it was asked for
	}
	switch page.Order {
	case OldestFirst:
		q.newestFirst = false
	case NewestFirst:
		q.newestFirst = true
	}
	if !page.After.IsZero() || !page.Before.IsZero() {
		q.lo, q.hi = timeRange(q.skPrefix, page.After, page.Before)
	}
	q.scope.Args = page.args(extraArgs)
	return q
}

// timeRange returns the inclusive sort-key bounds, under prefix, of the
// ULIDs whose time is strictly after after and strictly before before (zero
// times: unbounded). A ULID's first ten characters are its millisecond time,
// in an alphabet that sorts as the times do.
func timeRange(prefix string, after, before time.Time) (lo, hi string) {
	lo, hi = prefix, prefix+"~" // "~" sorts after every ID character
	if !after.IsZero() {
		lo = prefix + ulidTime(after.Truncate(time.Millisecond).Add(time.Millisecond))
	}
	if !before.IsZero() {
		last := before.Add(-time.Nanosecond).Truncate(time.Millisecond) // the last whole millisecond before it
		hi = prefix + ulidTime(last) + "~"
	}
	return lo, hi
}

// ulidTime returns the time part of the ULIDs of t's millisecond.
func ulidTime(t time.Time) string {
	var id ulid.ULID
	if err := id.SetTime(ulid.Timestamp(t)); err != nil {
		return strings.Repeat("~", 10) // past ULID's range: after every ID
	}
	return id.String()[:10]
}

// MinTime and MaxTime bound the times After and Before may take: those a
// ULID can hold.
var (
	MinTime = time.UnixMilli(0).UTC()
	MaxTime = ulid.Time(ulid.MaxTime()).UTC()
)

// holds reports whether key is a key of an item this query reads: exactly the
// key attributes of its index, in its partition and its sort-key range. A
// token signed with the right key may still carry another key (a leaked key,
// a bug): DynamoDB would refuse it, or start elsewhere.
func (q partitionQuery) holds(key map[string]types.AttributeValue) bool {
	attrs := keyAttrs(q.scope.Index)
	if len(key) != len(attrs) {
		return false
	}
	for _, a := range attrs {
		if _, ok := key[a].(*types.AttributeValueMemberS); !ok {
			return false
		}
	}
	keys := indexKeys(q.scope.Index)
	pk := key[keys.PartitionKey].(*types.AttributeValueMemberS).Value
	sk := key[keys.SortKey].(*types.AttributeValueMemberS).Value
	if q.lo != "" && (sk < q.lo || sk > q.hi) {
		return false
	}
	return pk == q.pk && strings.HasPrefix(sk, q.skPrefix) && sk != q.skPrefix
}

// The connections' queries: the partition each reads, its sort-key range and
// its order, and the scope that binds its tokens.

// postsByAuthor reads the author's published posts, by publication time, or
// (drafts) the author's drafts, by creation time.
func postsByAuthor(authorID string, drafts bool) partitionQuery {
	prefix := PostPrefix
	if drafts {
		prefix = prefixDraft
	}
	return partitionQuery{scope: cursor.Scope{Query: "User.posts", Parent: authorID, Index: GSI1},
		pk: AuthorPK(authorID), skPrefix: prefix, newestFirst: true}
}

func commentsOnPost(postID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Post.comments", Parent: postID}, pk: PostPK(postID), skPrefix: CommentPrefix}
}

func commentsByAuthor(authorID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.comments", Parent: authorID, Index: GSI1},
		pk: AuthorPK(authorID), skPrefix: CommentPrefix, newestFirst: true}
}

// likesOnPost reads a post's likes, newest first.
func likesOnPost(postID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Post.likes", Parent: postID}, pk: PostPK(postID), skPrefix: LikePrefix, newestFirst: true}
}

func following(userID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.following", Parent: userID}, pk: UserPK(userID), skPrefix: FollowsPrefix}
}

func followers(userID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.followers", Parent: userID, Index: GSI2}, pk: FollowersPK(userID), skPrefix: prefixFollower}
}

// keyAttrs returns the key attributes of the index named index ("" for the
// table): what a LastEvaluatedKey holds.
func keyAttrs(index string) []string {
	attrs := []string{Schema.Keys.PartitionKey, Schema.Keys.SortKey}
	for _, ix := range Schema.Indexes {
		if ix.Name == index {
			attrs = append(attrs, ix.Keys.PartitionKey, ix.Keys.SortKey)
		}
	}
	return attrs
}

func indexKeys(index string) KeySchema {
	for _, ix := range Schema.Indexes {
		if ix.Name == index {
			return ix.Keys
		}
	}
	return Schema.Keys
}

// queryPage runs q for one page with exactly one Query of Limit+1 items, and
// returns a nextToken whenever another page may exist: more items, a
// LastEvaluatedKey, or a page cut to page.MaxBytes.
func queryPage[T any](ctx context.Context, s *Store, q partitionQuery, page PageRequest) (Page[T], error) {
	raw, err := rawPage(ctx, s, q, page)
	if err != nil {
		return Page[T]{}, err
	}
	return decodePage[T]("store."+q.scope.Query, raw, page)
}

// rawPage is queryPage's page with its items as DynamoDB returned them,
// not yet cut to page.MaxBytes (which is the size of what they decode to).
func rawPage(ctx context.Context, s *Store, q partitionQuery, page PageRequest) (Page[Item], error) {
	out, err := queryItems(ctx, s, q, page)
	if err != nil {
		return Page[Item]{}, err
	}
	result := Page[Item]{Items: out.Items, after: func(i int) (string, error) {
		return s.tokens.Encode(q.scope, lastKey(out.Items[i], q.scope.Index))
	}}
	switch {
	case len(out.Items) > page.Limit:
		return result.Cut(page.Limit)
	case len(out.LastEvaluatedKey) > 0:
		// Fewer items than asked, and more may follow: resume where DynamoDB stopped.
		token, err := s.tokens.Encode(q.scope, out.LastEvaluatedKey)
		if err != nil {
			return Page[Item]{}, err
		}
		result.NextToken = &token
	}
	return result, nil
}

// decodePage is raw with its items decoded as the entities T, read with
// page's attributes, cut to page.MaxBytes.
func decodePage[T any](op string, raw Page[Item], page PageRequest) (Page[T], error) {
	result := Page[T]{Items: make([]T, len(raw.Items)), NextToken: raw.NextToken, after: raw.after}
	for i, item := range raw.Items {
		if err := unmarshal(op, item, &result.Items[i]); err != nil {
			return Page[T]{}, err
		}
		readOnly(&result.Items[i], page.Attributes)
	}
	return result.Fit(page.MaxBytes)
}

// queryItems checks page and sends queryPage's Query: its limit one more
// than the page's, resuming after the page's nextToken. It is apart from
// queryPage so that the request is built once in the binary, not once for
// each item type queryPage is instantiated with.
func queryItems(ctx context.Context, s *Store, q partitionQuery, page PageRequest) (*dynamodb.QueryOutput, error) {
	op := "store." + q.scope.Query
	if err := CheckIDs(op, q.scope.Parent); err != nil {
		return nil, err
	}
	if page.Limit < 1 || page.Limit > MaxLimit {
		return nil, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	keys := indexKeys(q.scope.Index)
	in := &dynamodb.QueryInput{
		TableName:        aws.String(s.table),
		ScanIndexForward: aws.Bool(!q.newestFirst),
		Limit:            aws.Int32(int32(page.Limit + 1)),
	}
	if q.scope.Index != "" {
		in.IndexName = aws.String(q.scope.Index)
	}
	cond := partition(keys.PartitionKey, q.pk)
	switch {
	case q.lo != "":
		cond = cond.And(expression.Key(keys.SortKey).Between(expression.Value(q.lo), expression.Value(q.hi)))
	case q.skPrefix != "":
		cond = cond.And(expression.Key(keys.SortKey).BeginsWith(q.skPrefix))
	}
	var attrs []string
	if page.Attributes != nil {
		attrs = append(keyAttrs(q.scope.Index), page.Attributes...)
	}
	if err := keyQuery(in, cond, attrs); err != nil {
		return nil, err
	}
	if page.NextToken != "" {
		start, err := s.tokens.Decode(q.scope, page.NextToken)
		if err != nil {
			return nil, err
		}
		if !q.holds(start) {
			return nil, errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
		}
		in.ExclusiveStartKey = start
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, Fail(op, err)
	}
	return out, nil
}

// lastKey is the ExclusiveStartKey that resumes a query on index right after item.
func lastKey(item map[string]types.AttributeValue, index string) map[string]types.AttributeValue {
	attrs := keyAttrs(index)
	key := make(map[string]types.AttributeValue, len(attrs))
	for _, a := range attrs {
		key[a] = item[a]
	}
	return key
}

// keyQuery fills in's key condition and projection of attrs (nil: every
// attribute) with placeholders for every name and value. Every Query of the
// store's access patterns is built here.
func keyQuery(in *dynamodb.QueryInput, cond expression.KeyConditionBuilder, attrs []string) error {
	b := expression.NewBuilder().WithKeyCondition(cond)
	if attrs != nil {
		b = b.WithProjection(namesList(attrs))
	}
	expr, err := b.Build()
	if err != nil {
		return errs.Wrap("store.keyQuery", errs.Internal, "internal error", err)
	}
	in.KeyConditionExpression = expr.KeyCondition()
	in.ExpressionAttributeNames = expr.Names()
	in.ExpressionAttributeValues = expr.Values()
	in.ProjectionExpression = expr.Projection()
	return nil
}

// namesList is the projection of attrs, each once (attribute names here are
// keys and schema field names, never document paths).
func namesList(attrs []string) expression.ProjectionBuilder {
	seen := make(map[string]bool, len(attrs))
	var names []expression.NameBuilder
	for _, a := range attrs {
		if !seen[a] {
			seen[a] = true
			names = append(names, expression.Name(a))
		}
	}
	return expression.NamesList(names[0], names[1:]...)
}

// partition is the key condition attr = pk.
func partition(attr, pk string) expression.KeyConditionBuilder {
	return expression.Key(attr).Equal(expression.Value(pk))
}

// Reading many items at once: BatchGetItem of at most 100 distinct keys a
// request, the chunks sent together, unprocessed keys retried with backoff
// and jitter until done or out of time.

// maxBatchGetKeys is the most keys one BatchGetItem request takes.
const maxBatchGetKeys = 100

// BatchGet reads the items with keys (deduplicated), one BatchGetItem per
// 100, concurrently, eventually consistent, retrying UnprocessedKeys until
// the deadline is near; absent items are missing. attrs, when not nil,
// limits what is read besides the keys.
func (s *Store) BatchGet(ctx context.Context, op string, keys []Key, attrs []string) (map[Key]map[string]types.AttributeValue, error) {
	return s.batchRead(ctx, op, keys, attrs, false)
}

// batchRead is batchGet, strongly consistent when consistent is true (a read
// unit per item of up to 4 KB, twice an eventually consistent read).
func (s *Store) batchRead(ctx context.Context, op string, keys []Key, attrs []string, consistent bool) (map[Key]map[string]types.AttributeValue, error) {
	unique := make([]Key, 0, len(keys))
	seen := make(map[Key]struct{}, len(keys))
	for _, k := range keys {
		if _, dup := seen[k]; !dup {
			seen[k] = struct{}{}
			unique = append(unique, k)
		}
	}
	found := make(map[Key]map[string]types.AttributeValue, len(unique))
	if len(unique) == 0 {
		return found, nil
	}
	if len(unique) <= maxBatchGetKeys { // one chunk: no goroutine to hand it to
		items, err := s.batchGetChunk(ctx, op, unique, attrs, consistent)
		for _, item := range items {
			if k, ok := keyOf(item); ok {
				found[k] = item
			}
		}
		return found, err
	}
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	branch := cost.Together(ctx) // the chunks are sent at once
	for start := 0; start < len(unique); start += maxBatchGetKeys {
		chunk := unique[start:min(start+maxBatchGetKeys, len(unique))]
		ctx := branch()
		wg.Go(func() {
			items, err := s.batchGetChunk(ctx, op, chunk, attrs, consistent)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if firstErr == nil {
					firstErr = err
				}
				return
			}
			for _, item := range items {
				if k, ok := keyOf(item); ok {
					found[k] = item
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	return found, nil
}

// batchGetChunk reads at most 100 distinct keys, retrying UnprocessedKeys.
func (s *Store) batchGetChunk(ctx context.Context, op string, keys []Key, attrs []string, consistent bool) ([]map[string]types.AttributeValue, error) {
	request := types.KeysAndAttributes{Keys: make([]map[string]types.AttributeValue, len(keys))}
	if consistent {
		request.ConsistentRead = aws.Bool(true)
	}
	for i, k := range keys {
		request.Keys[i] = k.Attributes()
	}
	if attrs != nil {
		expr, err := expression.NewBuilder().WithProjection(namesList(append([]string{AttrPK, AttrSK}, CountedAttrs(attrs)...))).Build()
		if err != nil {
			return nil, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		request.ExpressionAttributeNames, request.ProjectionExpression = expr.Names(), expr.Projection()
	}
	pending := map[string]types.KeysAndAttributes{s.table: request}
	deadline, hasDeadline := ctx.Deadline()
	if !hasDeadline {
		deadline = time.Now().Add(noDeadlineLimit)
	}
	var items []map[string]types.AttributeValue
	for attempt := 0; ; attempt++ {
		out, err := s.api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: pending})
		if err != nil {
			return nil, Fail(op, err)
		}
		items = append(items, out.Responses[s.table]...)
		if len(out.UnprocessedKeys[s.table].Keys) == 0 {
			return items, nil
		}
		pending = out.UnprocessedKeys
		wait := backoff(attempt)
		if time.Until(deadline) < wait+backoffBase {
			return nil, errs.E(op, errs.Throttled, "DynamoDB left keys unprocessed until the deadline; retry later")
		}
		if err := sleep(ctx, wait); err != nil {
			return nil, errs.Wrap(op, errs.Internal, "internal error", err)
		}
	}
}

// QueryAll runs in page after page, handing each item to each until each
// returns false or the range ends.
func (s *Store) QueryAll(ctx context.Context, op string, in *dynamodb.QueryInput, each func(map[string]types.AttributeValue) bool) error {
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
