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
}

// Page is one page of a connection, shaped as the schema's *Connection types.
// NextToken is nil on the last page.
type Page[T any] struct {
	Items     []T     `json:"items"`
	NextToken *string `json:"nextToken"`
}

// partitionQuery is a Query over one partition of the table or an index,
// optionally narrowed to sort keys starting with a prefix.
type partitionQuery struct {
	scope       cursor.Scope // binds the query's tokens; Scope.Index names the index
	pk          string       // partition key value
	skPrefix    string       // begins_with condition on the sort key; "" for none
	newestFirst bool         // ScanIndexForward=false
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
// a nextToken only when one does.
func queryPage[T any](ctx context.Context, s *Store, op string, q partitionQuery, page PageRequest) (Page[T], error) {
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
		in.ExclusiveStartKey = start
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return Page[T]{}, fail(op, err)
	}
	items := out.Items
	var next *string
	if len(items) > page.Limit {
		items = items[:page.Limit]
		token, err := s.tokens.Encode(q.scope, lastKey(items[len(items)-1], q.scope.Index))
		if err != nil {
			return Page[T]{}, err
		}
		next = &token
	}
	result := Page[T]{Items: make([]T, len(items))}
	for i, item := range items {
		if err := attributevalue.UnmarshalMap(item, &result.Items[i]); err != nil {
			return Page[T]{}, errs.Wrap(op, errs.Internal, "internal error", err)
		}
	}
	result.NextToken = next
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
