package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cursor"
)

// The connections, one access pattern each: a page of one partition's items
// (queryPage; which partition, index, sort-key range and order is said once,
// in query.go); a parent's children, through the store's Spread when it has
// one (Spread, below: lambda/hotkeys reads a hot parent's shards too).

// PostsByAuthor returns a page of the author's published posts, newest first
// unless page says otherwise (AP4), or drafts (AP4d): one Query on GSI1, then
// one BatchGetItem of the page's counter items when attrs may name a count.
// Whether the caller may see drafts is the caller's to decide.
func (s *Store) PostsByAuthor(ctx context.Context, authorID string, drafts bool, page PageRequest) (Page[Post], error) {
	status := ""
	if drafts {
		status = "status=" + StatusDraft
	}
	p, err := queryPage[Post](ctx, s, postsByAuthor(authorID, drafts).shaped(page, status), page)
	if err == nil && SelectsCount(page.Attributes, PostCounts) {
		err = s.AddCounters(ctx, "store.User.posts", p.Items)
	}
	return p, err
}

// CommentsOnPost returns a page of the post's comments, oldest first unless
// page says otherwise (AP5): one Query on the post's partition (or, a hot
// post's, on it and CommentShards of its shards: lambda/hotkeys), a first
// page of which a layer may keep (lambda/hotpage).
func (s *Store) CommentsOnPost(ctx context.Context, postID string, page PageRequest) (Page[Comment], error) {
	return children[Comment](ctx, s, commentsOnPost(postID).shaped(page, ""), page)
}

// CommentsByAuthor returns a page of the author's comments, newest first
// unless page says otherwise (AP6): one Query on GSI1.
func (s *Store) CommentsByAuthor(ctx context.Context, authorID string, page PageRequest) (Page[Comment], error) {
	return queryPage[Comment](ctx, s, commentsByAuthor(authorID).shaped(page, ""), page)
}

// Following returns a page of the follows the user made, ordered by the
// followed user's ID (AP7): one Query on the user's partition.
func (s *Store) Following(ctx context.Context, userID string, page PageRequest) (Page[Follow], error) {
	return queryPage[Follow](ctx, s, following(userID), page)
}

// Likes returns a page of the post's likes, newest first: one Query on the
// post's partition (or, a hot post's, on it and its shards: lambda/hotkeys).
func (s *Store) Likes(ctx context.Context, postID string, page PageRequest) (Page[Like], error) {
	return children[Like](ctx, s, likesOnPost(postID).shaped(page, ""), page)
}

// Followers returns a page of the users following userID, ordered by
// follower ID (AP8): one Query on GSI2, or (a hot user's) on its GSI2
// partition and its shards': lambda/hotkeys).
func (s *Store) Followers(ctx context.Context, userID string, page PageRequest) (Page[Follow], error) {
	return children[Follow](ctx, s, followers(userID), page)
}

// A parent's children: a post's likes and comments, a user's followers,
// each counted on the parent's counter and listed by a connection of the
// parent's partition (the user's GSI2 partition, for followers). A page of
// them is one Query of that partition (queryPage), and a new one is written
// there with its count, unless the store has a Spread (WithSpread): a layer
// under the access patterns that keeps some parents' children in other
// partitions too, under the same sort keys (lambda/hotkeys: a hot parent's
// shards: Spread, in store.go), which says where a child goes and reads a
// page of them, asked through the functions below and a write's Place.

// WithSpread makes the store keep its parents' children through the
// Spread that spread makes of it.
func WithSpread(spread func(*Store) Spread) Option {
	return func(s *Store) { s.spread = spread(s) }
}

// Spread is the store's Spread (nil: none).
func (s *Store) Spread() Spread { return s.spread }

// add writes a new child of kind under parent with write: through the
// Spread, or at the zero Place.
func (s *Store) add(ctx context.Context, kind, parent, id string, missing error, write func(context.Context, Place) error) error {
	if s.spread == nil {
		return write(ctx, Place{})
	}
	return s.spread.Add(ctx, kind, parent, id, missing, write)
}

// locate is the place of an existing child (see Spread.Locate): the zero
// Place without a Spread, or for a child in its parent's partition.
func (s *Store) locate(kind, parent, id, partition string) Place {
	if s.spread == nil {
		return Place{}
	}
	return s.spread.Locate(kind, parent, id, partition)
}

// wrote tells the Spread of a write at place.
func (s *Store) wrote(ctx context.Context, place Place) {
	if s.spread != nil && place.Counter != "" {
		s.spread.Wrote(ctx, place)
	}
}

// countOn is the action adding delta to counter of a child at place: on the
// parent's counter (pk) under the Spread's guard, or on place's part
// counter. missing is the error of an absent counter, otherwise of one whose
// other conditions fail (nil: missing).
func (s *Store) countOn(kind string, place Place, pk, counter string, delta int, missing, otherwise error) txAction {
	if place.Counter != "" {
		add := expression.Add(expression.Name(counter), expression.Value(delta)).Add(expression.Name("version"), expression.Value(1))
		return txAction{key: Key{place.Counter, SKShard}, update: &add, cond: itemExists, failed: func(old Item) error {
			if len(old) == 0 || otherwise == nil {
				return missing
			}
			return otherwise
		}}
	}
	a := s.addCount(pk, SKCount, counter, delta, onCounter(missing, otherwise))
	if delta > 0 && s.spread != nil {
		var cond expression.ConditionBuilder
		cond, a.failed = s.spread.Guard(kind, a.failed)
		a.cond = a.cond.And(cond)
	}
	return a
}

// partsOf are the partitions besides its own that the parent's children
// are in (see Spread.Parts).
func (s *Store) partsOf(ctx context.Context, pk string, shards int) ([]string, error) {
	if s.spread == nil {
		return nil, nil
	}
	return s.spread.Parts(ctx, pk, shards)
}

// children reads a page of q, a connection of its parent's children.
func children[T any](ctx context.Context, s *Store, q partitionQuery, page PageRequest) (Page[T], error) {
	if s.spread == nil {
		return queryPage[T](ctx, s, q, page)
	}
	raw, err := s.spread.Page(ctx, Children{s: s, q: q}, page)
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

// allChildren hands each child of q, read with attrs (and the keys), to
// each until it returns false: from the parent's partition, or through the
// Spread.
func allChildren(ctx context.Context, s *Store, q partitionQuery, attrs []string, each func(Item) bool) error {
	c := Children{s: s, q: q, attrs: attrs}
	if s.spread == nil {
		return c.All(ctx, "", each)
	}
	return s.spread.All(ctx, c, each)
}

// All hands each child of the connection in the partition pk ("": the
// parent's own) to each, Query page after page, until it returns false.
func (c Children) All(ctx context.Context, pk string, each func(Item) bool) error {
	if pk == "" {
		pk = c.q.pk
	}
	keys := indexKeys(c.q.scope.Index)
	in := &dynamodb.QueryInput{TableName: aws.String(c.s.table)}
	if c.q.scope.Index != "" {
		in.IndexName = aws.String(c.q.scope.Index)
	}
	if err := keyQuery(in, partition(keys.PartitionKey, pk), c.attrs); err != nil {
		return err
	}
	return c.s.QueryAll(ctx, "store."+c.q.scope.Query, in, each)
}
