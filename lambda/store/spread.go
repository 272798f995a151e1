package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
)

// A parent's children: a post's likes and comments, a user's followers,
// each counted on the parent's counter and listed by a connection of the
// parent's partition (the user's GSI2 partition, for followers). A page of
// them is one Query of that partition (queryPage), unless the store has a
// Spread (WithSpread): a layer under the access patterns that keeps some
// parents' children in other partitions too, under the same sort keys
// (lambda/hotkeys: a hot parent's shards), and reads a page of them.

// Item is an item as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// Spread reads a page of a parent's children, in the connection's order,
// from the partitions it keeps them in: Children.Own alone, for a parent it
// has not spread. Its tokens are signed with the store's codec (Tokens),
// under the connection's scope, so that a token of one page resumes under
// the other's reading.
type Spread interface {
	Page(ctx context.Context, c Children, page PageRequest) (Page[Item], error)
}

// WithSpread makes the store read every page of a parent's children
// through sp.
func WithSpread(sp Spread) Option { return func(s *Store) { s.spread = sp } }

// Children is a connection of one parent's children, as a Spread reads it.
type Children struct {
	s     *Store
	q     partitionQuery
	known *hotKeys
}

// children reads a page of q, a connection of its parent's children.
func children[T any](ctx context.Context, s *Store, q partitionQuery, known *hotKeys, page PageRequest) (Page[T], error) {
	if s.spread == nil {
		return queryPage[T](ctx, s, q, page)
	}
	raw, err := s.spread.Page(ctx, Children{s: s, q: q, known: known}, page)
	if err != nil {
		return Page[T]{}, err
	}
	return decodePage[T]("store."+q.scope.Query, raw, page)
}

// Scope is the scope the connection's tokens are bound to: its field
// (Scope.Query: "Post.comments", "Post.likes", "User.followers"), its
// parent's ID, its index and arguments.
func (c Children) Scope() cursor.Scope { return c.q.scope }

// Prefix is the sort-key prefix of the children.
func (c Children) Prefix() string { return c.q.skPrefix }

// NewestFirst reports whether the page is in descending sort-key order.
func (c Children) NewestFirst() bool { return c.q.newestFirst }

// Range is the range of sort keys the connection reads in each partition,
// inclusive (a time range's, or the whole prefix's).
func (c Children) Range() (lo, hi string) {
	if c.q.lo == "" {
		return c.q.skPrefix, c.q.skPrefix + "~"
	}
	return c.q.lo, c.q.hi
}

// Ranged reports whether the page reads a range narrower than the prefix
// (After or Before).
func (c Children) Ranged() bool { return c.q.lo != "" }

// Own reads the page from the parent's own partition alone, as a store
// without a Spread does (one Query).
func (c Children) Own(ctx context.Context, page PageRequest) (Page[Item], error) {
	return rawPage(ctx, c.s, c.q, page)
}

// Store is the store the children are read from: its client, table and
// tokens' codec.
func (c Children) Store() *Store { return c.s }

// Read queries the partition pk (of the connection's table or index; "":
// the parent's own) for up to limit children with sort keys in [lo, hi], in the connection's
// order, reading attrs of them (nil: all) and the keys; more reports that
// DynamoDB stopped before the range's end.
func (c Children) Read(ctx context.Context, pk, lo, hi string, limit int, attrs []string) (items []Item, more bool, err error) {
	op := "store." + c.q.scope.Query
	if pk == "" {
		pk = c.q.pk
	}
	keys := indexKeys(c.q.scope.Index)
	in := &dynamodb.QueryInput{TableName: aws.String(c.s.table), ScanIndexForward: aws.Bool(!c.q.newestFirst), Limit: aws.Int32(int32(limit))}
	if c.q.scope.Index != "" {
		in.IndexName = aws.String(c.q.scope.Index)
	}
	cond := partition(keys.PartitionKey, pk).And(expression.Key(keys.SortKey).Between(expression.Value(lo), expression.Value(hi)))
	if attrs != nil {
		attrs = append(keyAttrs(c.q.scope.Index), attrs...)
	}
	if err := keyQuery(in, cond, attrs); err != nil {
		return nil, false, err
	}
	out, err := c.s.api.Query(ctx, in)
	if err != nil {
		return nil, false, Fail(op, err)
	}
	return out.Items, len(out.LastEvaluatedKey) > 0, nil
}

// SortKey is the sort key of item (or a key) in the connection's table or
// index.
func (c Children) SortKey(item Item) string {
	return stringAttr(item, indexKeys(c.q.scope.Index).SortKey)
}

// Resume is the key that resumes the connection of the parent's own
// partition right after item, of whichever partition: what a token of the
// connection carries.
func (c Children) Resume(item Item) Item {
	end := lastKey(item, c.q.scope.Index)
	end[indexKeys(c.q.scope.Index).PartitionKey] = str(c.q.pk)
	return end
}

// Holds reports whether key, read from a token, is a key of the
// connection's own partition in its range (any other is forged, or a bug).
func (c Children) Holds(key Item) bool { return c.q.holds(key) }

// Known is how many shards the store knows the parent's children are
// spread over (0: none known); Learn tells it.
func (c Children) Known() int { return c.known.of(c.q.scope.Parent) }

// Learn records that the parent's children are spread over n shards.
func (c Children) Learn(n int) { c.known.learn(c.q.scope.Parent, n) }
