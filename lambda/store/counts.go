package store

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Counts. A user's and a post's counts live on a counter item (SKCount) in
// their partition, beside the entity's own item (SKMetadata): a comment, a
// like or a follow rewrites that small item, whatever the size of the post
// or profile it counts on, and the writes check existence, status and
// author on it too. The two items are adjacent, so a read by key is one
// Query of both, and a BatchGetItem asks for both keys when a count is
// selected.
//
// Items written before counters existed carry counts of their own and no
// counter. A count read is the entity's own (absent on every item written
// since) plus its counter's, so old items need no backfill; the first write
// that counts on one adopts it (adopt): moves its counts onto a new counter,
// in a transaction conditioned on the entity as it read it, and writes
// again.

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

// sortKey is the item's sort key ("" when it has none).
func sortKey(item map[string]types.AttributeValue) string { return stringAttr(item, AttrSK) }

// stringAttr is the value of the item's string attribute name ("" when it
// has none, or it is not a string).
func stringAttr(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// addCounter adds to v the counts of the counter item of partition pk, read
// with one strongly consistent GetItem (none for an entity older than
// counters, not adopted yet: nothing to add).
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

// Count names: the counts of a user and of a post, as attributes and as the
// schema's fields. A read asks for counter items only when it may read one
// of them (SelectsCount).
var (
	UserCounts = countNames[userCounterItem, User]()
	PostCounts = countNames[postCounterItem, Post]()
)

// countNames are the attributes of the counter item C that are integers
// and attributes of the entity E.
func countNames[C, E any]() []string {
	var names []string
	c := reflect.TypeFor[C]()
	for i := range c.NumField() {
		name, _, _ := strings.Cut(c.Field(i).Tag.Get("dynamodbav"), ",")
		if c.Field(i).Type.Kind() == reflect.Int && slices.Contains(schemaAttributes[E](), name) {
			names = append(names, name)
		}
	}
	return names
}

// SelectsCount reports whether a read of attrs (nil: everything) reads one
// of counts.
func SelectsCount(attrs []string, counts []string) bool {
	return attrs == nil || slices.ContainsFunc(attrs, func(a string) bool { return slices.Contains(counts, a) })
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

// noCounter is the failure of a write's action on a counter item that was
// absent: its entity is missing, or was written before counters existed.
type noCounter struct {
	pk      string // the entity's partition
	missing error  // the write's error when the entity is missing
}

func (e *noCounter) Error() string { return "no counter item in " + e.pk }

// onCounter returns the failure function of an action on the counter item of
// partition pk: noCounter when it was absent; when it was there, otherwise
// (nil: missing, the entity being absent to the caller, a draft for one).
func onCounter(pk string, missing, otherwise error) func(map[string]types.AttributeValue) error {
	return func(old map[string]types.AttributeValue) error {
		switch {
		case len(old) == 0:
			return &noCounter{pk: pk, missing: missing}
		case otherwise != nil:
			return otherwise
		}
		return missing
	}
}

// maxAdoptions bounds how often one write adopts an entity before giving up
// on it as missing (each adoption is undone only by the entity changing in
// between: deleted, or published).
const maxAdoptions = 3

// counting runs write, a transaction with actions on counter items (each
// failing with onCounter). When one fails for an absent counter, it adopts
// the entity and runs write again; a missing entity returns the write's own
// error for it.
func (s *Store) counting(ctx context.Context, op string, write func() error) error {
	for attempt := 0; ; attempt++ {
		err := write()
		var none *noCounter
		if !errors.As(err, &none) {
			return err
		}
		if attempt == maxAdoptions {
			return none.missing
		}
		found, err := s.adopt(ctx, op, none.pk)
		if err != nil {
			return err
		}
		if !found {
			return none.missing
		}
	}
}

// errAdopted marks an adoption that found the counter written already, or
// the entity changed since it was read: the write tries again either way.
var errAdopted = errors.New("adopted meanwhile")

// adopt writes the counter item of the entity of partition pk, written before
// counters existed, moving the entity's counts onto it: one GetItem, then
// one transaction conditioned on what was read. It costs the entity's item
// rewritten once, ever; false when the entity is absent.
func (s *Store) adopt(ctx context.Context, op, pk string) (bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table),
		Key: Key{pk, SKMetadata}.Attributes(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, Fail(op, err)
	}
	if out.Item == nil {
		return false, nil
	}
	var (
		counter any
		counts  []string
		cond    = itemExists
	)
	if strings.HasPrefix(pk, prefixPost) {
		var p Post
		if err := attributevalue.UnmarshalMap(out.Item, &p); err != nil {
			return false, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		cond = cond.And(expression.Name("authorId").Equal(expression.Value(p.AuthorID)))
		if p.Status == "" {
			cond = cond.And(expression.AttributeNotExists(expression.Name("status")))
		} else {
			cond = cond.And(expression.Name("status").Equal(expression.Value(p.Status)))
		}
		counter, counts = newPostCounter(p), PostCounts
	} else {
		var u User
		if err := attributevalue.UnmarshalMap(out.Item, &u); err != nil {
			return false, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		counter, counts = newUserCounter(u), UserCounts
	}
	av, err := marshal(op, counter)
	if err != nil {
		return false, err
	}
	remove := expression.Remove(expression.Name(counts[0]))
	for _, c := range counts[1:] {
		remove = remove.Remove(expression.Name(c))
	}
	for _, c := range counts { // the counts moved are those read
		n, _ := out.Item[c].(*types.AttributeValueMemberN)
		if n == nil {
			cond = cond.And(expression.AttributeNotExists(expression.Name(c)))
			continue
		}
		v, err := strconv.ParseInt(n.Value, 10, 64)
		if err != nil {
			return false, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		cond = cond.And(expression.Name(c).Equal(expression.Value(v)))
	}
	own := txAction{key: Key{pk, SKMetadata}, update: &remove, cond: cond, failed: func(map[string]types.AttributeValue) error { return errAdopted }}
	err = s.transact(ctx, op, own, s.put(av, func(map[string]types.AttributeValue) error { return errAdopted }))
	if err != nil && !errors.Is(err, errAdopted) {
		return false, err
	}
	return true, nil
}
