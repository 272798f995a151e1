package store

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// One Query of one partition: each connection's shape (which partition,
// index, sort-key range, order, and the scope its tokens are bound to), and
// queryPage, which reads a page of it.

// partitionQuery is a Query over one partition of the table or an index,
// optionally narrowed to sort keys starting with a prefix, and within it to
// an inclusive range of sort keys.
type partitionQuery struct {
	scope       cursor.Scope // binds the query's tokens; Scope.Index names the index
	pk          string       // partition key value
	skPrefix    string       // begins_with condition on the sort key; "" for none
	lo, hi      string       // BETWEEN condition on the sort key (both set, or neither)
	newestFirst bool         // ScanIndexForward=false
}

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

// A page of a connection: what a caller asks (PageRequest: a limit, a token,
// an order, a time range, the attributes to read) and what it gets (Page:
// the items, a token for the next page, cut to a byte budget when asked).

// Page limits of every connection.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// PageRequest asks for one page of a connection.
type PageRequest struct {
	Limit     int    // 1..MaxLimit
	NextToken string // "" for the first page
	// Attributes, when not nil, limits what is read of each item to these
	// attributes (and the keys, which are always read): a ProjectionExpression
	// that saves bytes when large attributes, such as a post's body, are not
	// needed. Names that are not attributes are ignored.
	Attributes []string
	// MaxBytes, when positive, ends the page early (with a NextToken) once its
	// items, encoded as the Lambda sends them, would take more bytes. A page
	// always holds at least one item when one remains.
	MaxBytes int
	// Order is the order of the items, defaultOrder for the connection's own.
	Order Order
	// After and Before, when not zero, are exclusive bounds on the items'
	// creation time (a post's publication time): only the items strictly
	// between them, found by the key condition (the sort keys are ULIDs of
	// that time), never by a filter.
	After, Before time.Time
}

// Order is the order of a connection's items.
type Order int

const (
	defaultOrder Order = iota // the connection's own
	OldestFirst
	NewestFirst
)

// String is the schema's SortOrder value.
func (o Order) String() string {
	switch o {
	case OldestFirst:
		return "OLDEST_FIRST"
	case NewestFirst:
		return "NEWEST_FIRST"
	}
	return ""
}

// args writes the arguments that shape a query canonically, for its tokens'
// scope: "" for the defaults, so that tokens issued before there were
// arguments stay valid.
func (r PageRequest) args(extra string) string {
	var parts []string
	if r.Order != defaultOrder {
		parts = append(parts, "order="+r.Order.String())
	}
	if !r.After.IsZero() {
		parts = append(parts, "after="+r.After.UTC().Format(time.RFC3339Nano))
	}
	if !r.Before.IsZero() {
		parts = append(parts, "before="+r.Before.UTC().Format(time.RFC3339Nano))
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, "&")
}

// Page is one page of a connection, shaped as the schema's *Connection types.
// NextToken is nil on the last page, and only there: a page may hold fewer
// items than its limit and still have a NextToken (DynamoDB's 1 MB read limit,
// a byte budget), but never ends while items remain.
type Page[T any] struct {
	Items     []T     `json:"items"`
	NextToken *string `json:"nextToken"`

	// after returns the token that resumes the connection after Items[i].
	after func(i int) (string, error)
}

// Cut returns the page ended after its first n items, with the token that
// resumes right after them; the page itself when n is not less than its
// length.
func (p Page[T]) Cut(n int) (Page[T], error) {
	if n >= len(p.Items) || n < 1 {
		return p, nil
	}
	token, err := p.after(n - 1)
	if err != nil {
		return Page[T]{}, err
	}
	p.Items = p.Items[:n]
	p.NextToken = &token
	return p, nil
}

// NewPage is a page of items: next is its token (nil on the last page),
// and after(i) the token that resumes after items[i], with which Cut and
// Fit end it early.
func NewPage[T any](items []T, next *string, after func(i int) (string, error)) Page[T] {
	return Page[T]{Items: items, NextToken: next, after: after}
}

// Fit returns the page cut to its first items that take at most maxBytes
// encoded as the Lambda sends them, and at least one (the page itself when
// maxBytes is not positive or they all fit).
func (p Page[T]) Fit(maxBytes int) (Page[T], error) {
	if maxBytes <= 0 {
		return p, nil
	}
	return p.Cut(max(fitBytes(p.Items, maxBytes), 1))
}

// fitBytes returns how many of the first items (perhaps none) take at most
// budget bytes encoded as the Lambda sends them, a comma each.
func fitBytes[T any](items []T, budget int) int {
	size := 0
	for n, item := range items {
		if size += payload.Size(item) + 1; size > budget {
			return n
		}
	}
	return len(items)
}

// Only is p with its items as if only attrs (nil: everything) had been
// read of them: what they encode (a page read whole, kept, and given to a
// request that selects less). p's items are not changed.
func (p Page[T]) Only(attrs []string) Page[T] {
	p.Items = slices.Clone(p.Items)
	for i := range p.Items {
		readOnly(&p.Items[i], attrs)
	}
	return p
}
