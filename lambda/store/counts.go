package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Counts. A user's and a post's counts live on a counter item (SKCount) in
// their partition, beside the entity's own item (SKMetadata): a comment, a
// like or a follow rewrites that small item, whatever the size of the post
// or profile it counts on, and the writes check existence, status and
// author on it too. The two items are adjacent, so a read by key is one
// Query of both, and a BatchGetItem asks for both keys when a count is
// selected.
//
// Every entity is written with its counter; a table with entities written
// before counters needs them added once (docs/table.md#counts).

// counted is an entity whose counts are kept on a counter item: add adds
// the counts of its counter item, read as the entity; tallies are a hot
// one's shards' counts on its counter item.
type counted[T any] interface {
	*T
	add(T)
	tallies() *map[string]ShardTally
}

// countedItems is the key condition of an entity's counter and own items.
func countedItems(pk string) expression.KeyConditionBuilder {
	return partition(AttrPK, pk).And(expression.Key(AttrSK).Between(expression.Value(SKCount), expression.Value(SKMetadata)))
}

// readCounted reads the entity of partition pk into v, its own item and its
// counter item, with one Query; false when its own item is absent.
func readCounted[T any, PT counted[T]](ctx context.Context, s *Store, op, pk string, consistent bool, v PT) (bool, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(consistent)}
	if err := keyQuery(in, countedItems(pk), nil); err != nil {
		return false, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return false, Fail(op, err)
	}
	return decodeCounted[T, PT](op, s, out.Items, v)
}

// decodeCounted decodes into v an entity's own item and its counter item,
// in any order among items, the counter's tallies as s's Spread counts
// them; false when its own item is not there.
func decodeCounted[T any, PT counted[T]](op string, s *Store, items []map[string]types.AttributeValue, v PT) (bool, error) {
	var (
		counter           T
		found, hasCounter bool
	)
	for _, item := range items {
		var err error
		switch sortKey(item) {
		case SKMetadata:
			found, err = true, unmarshal(op, item, v)
		case SKCount:
			hasCounter, err = true, unmarshal(op, item, &counter)
			t := PT(&counter).tallies()
			*t = s.tallies(stringAttr(item, AttrPK), *t)
		}
		if err != nil {
			return false, err
		}
	}
	if found && hasCounter {
		v.add(counter)
	}
	return found, nil
}

// addCounter adds to v the counts of the counter item of partition pk, read
// with one strongly consistent GetItem.
func addCounter[T any, PT counted[T]](ctx context.Context, s *Store, op, pk string, v PT) error {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: Key{pk, SKCount}.Attributes(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Fail(op, err)
	}
	if out.Item == nil {
		return nil
	}
	var c T
	if err := unmarshal(op, out.Item, &c); err != nil {
		return err
	}
	t := PT(&c).tallies()
	*t = s.tallies(pk, *t)
	v.add(c)
	return nil
}

// AddCounters reads the counter items of the posts and adds their counts:
// one BatchGetItem per 100 posts, of the counts only.
func (s *Store) AddCounters(ctx context.Context, op string, posts []Post) error {
	if len(posts) == 0 {
		return nil
	}
	keys := make([]Key, len(posts))
	for i, p := range posts {
		keys[i] = Key{PostPK(p.ID), SKCount}
	}
	items, err := s.BatchGet(ctx, op, keys, PostCounts)
	if err != nil {
		return err
	}
	for i := range posts {
		if item, ok := items[keys[i]]; ok {
			var c Post
			if err := unmarshal(op, item, &c); err != nil {
				return err
			}
			c.Hot = s.tallies(keys[i].PK, c.Hot)
			posts[i].add(c)
		}
	}
	return nil
}

// onCounter returns the failure function of an action on a counter item:
// otherwise when the counter was there and otherwise is set (the entity is
// someone else's, say), missing when not (the entity is absent to the caller).
func onCounter(missing, otherwise error) func(map[string]types.AttributeValue) error {
	return func(old map[string]types.AttributeValue) error {
		if len(old) > 0 && otherwise != nil {
			return otherwise
		}
		return missing
	}
}

// A parent's counts in parts: each part counter (SKShard, a hot parent's
// shard's) counts its own children (likes, comments or followers, with a
// version), and the projector copies them, with the version read, onto the
// parent's counter (lambda/hotkeys: Tallies), under "hot", so that a read
// of the parent's counts reads its counter alone and adds them up.

// tallies are the part counts of a counter read from partition pk.
func (s *Store) tallies(pk string, t map[string]ShardTally) map[string]ShardTally {
	if s.spread == nil || t == nil {
		return t
	}
	return s.spread.Tallies(pk, t)
}

// learn tells the Spread what the counter of partition pk says of its
// parts.
func (s *Store) learn(pk string, shards int) {
	if s.spread != nil {
		s.spread.Learn(pk, shards)
	}
}
