package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

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

// partitionQuery is a Query over one partition of the table or an index,
// optionally narrowed to sort keys starting with a prefix.
type partitionQuery struct {
	scope       cursor.Scope // binds the query's tokens; Scope.Index names the index
	pk          string       // partition key value
	skPrefix    string       // begins_with condition on the sort key; "" for none
	newestFirst bool         // ScanIndexForward=false
}

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
	return pk == q.pk && strings.HasPrefix(sk, q.skPrefix) && sk != q.skPrefix
}

// The connections' queries: the partition each reads, its sort-key range and
// its order, and the scope that binds its tokens.

func postsByAuthor(authorID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.posts", Parent: authorID, Index: GSI1},
		pk: AuthorPK(authorID), skPrefix: PostPrefix, newestFirst: true}
}

func commentsOnPost(postID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Post.comments", Parent: postID}, pk: PostPK(postID), skPrefix: CommentPrefix}
}

func commentsByAuthor(authorID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.comments", Parent: authorID, Index: GSI1},
		pk: AuthorPK(authorID), skPrefix: CommentPrefix, newestFirst: true}
}

func following(userID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.following", Parent: userID}, pk: UserPK(userID), skPrefix: FollowsPrefix}
}

func followers(userID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "User.followers", Parent: userID, Index: GSI2}, pk: FollowersPK(userID)}
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

// queryPage runs q for one page. It costs exactly one Query request: it asks
// for Limit+1 items so that it knows whether another page exists, and returns
// a nextToken whenever one may: more items than the limit, a LastEvaluatedKey
// (DynamoDB stops at 1 MB read, so a page may be short and not the last), or
// a page cut to page.MaxBytes.
func queryPage[T any](ctx context.Context, s *Store, q partitionQuery, page PageRequest) (Page[T], error) {
	op := "store." + q.scope.Query
	if err := checkIDs(op, q.scope.Parent); err != nil {
		return Page[T]{}, err
	}
	if page.Limit < 1 || page.Limit > MaxLimit {
		return Page[T]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	keys := indexKeys(q.scope.Index)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": keys.PartitionKey},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: q.pk}},
		ScanIndexForward:          aws.Bool(!q.newestFirst),
		Limit:                     aws.Int32(int32(page.Limit + 1)),
	}
	if q.scope.Index != "" {
		in.IndexName = aws.String(q.scope.Index)
	}
	if page.Attributes != nil {
		in.ProjectionExpression = aws.String(projection(in.ExpressionAttributeNames, append(keyAttrs(q.scope.Index), page.Attributes...)))
	}
	if q.skPrefix != "" {
		in.KeyConditionExpression = aws.String("#pk = :pk AND begins_with(#sk, :sk)")
		in.ExpressionAttributeNames["#sk"] = keys.SortKey
		in.ExpressionAttributeValues[":sk"] = &types.AttributeValueMemberS{Value: q.skPrefix}
	}
	if page.NextToken != "" {
		start, err := s.tokens.Decode(q.scope, page.NextToken)
		if err != nil {
			return Page[T]{}, err
		}
		if !q.holds(start) {
			return Page[T]{}, errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
		}
		in.ExclusiveStartKey = start
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return Page[T]{}, fail(op, err)
	}
	result := Page[T]{Items: make([]T, len(out.Items))}
	for i, item := range out.Items {
		if err := attributevalue.UnmarshalMap(item, &result.Items[i]); err != nil {
			return Page[T]{}, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		readOnly(&result.Items[i], page.Attributes)
	}
	result.after = func(i int) (string, error) {
		return s.tokens.Encode(q.scope, lastKey(out.Items[i], q.scope.Index))
	}
	switch {
	case len(out.Items) > page.Limit:
		if result, err = result.Cut(page.Limit); err != nil {
			return Page[T]{}, err
		}
	case len(out.LastEvaluatedKey) > 0:
		// Fewer items than asked, and more may follow: resume where DynamoDB stopped.
		token, err := s.tokens.Encode(q.scope, out.LastEvaluatedKey)
		if err != nil {
			return Page[T]{}, err
		}
		result.NextToken = &token
	}
	if page.MaxBytes > 0 {
		return result.Cut(max(fitBytes(result.Items, page.MaxBytes), 1)) // a page holds at least one item
	}
	return result, nil
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

// projection returns a ProjectionExpression for attrs, adding a placeholder
// name for each to names (so reserved words such as "name" are safe).
func projection(names map[string]string, attrs []string) string {
	seen := make(map[string]bool, len(attrs))
	var b strings.Builder
	for _, a := range attrs {
		if seen[a] {
			continue
		}
		seen[a] = true
		ph := fmt.Sprintf("#p%d", len(seen))
		names[ph] = a
		if b.Len() > 0 {
			b.WriteString(", ")
		}
		b.WriteString(ph)
	}
	return b.String()
}
