package store

import (
	"context"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// Lookups by key: a user or a post with its counts, many of them at once
// (BatchGetItem), a user by handle, whether posts exist.

// User returns the user with the given ID, counts included (AP1): one Query
// of its two items, the profile and its counter (the same read units as a
// GetItem of the profile). An absent user is a NotFound error.
func (s *Store) User(ctx context.Context, id string) (User, error) {
	var u User
	return u, getCounted(ctx, s, "store.User", UserPK, id, "user not found", &u)
}

// Post returns the post with the given ID, counts included (AP3): one Query
// of its two items, as User. An absent post is a NotFound error.
func (s *Store) Post(ctx context.Context, id string) (Post, error) {
	var p Post
	err := getCounted(ctx, s, "store.Post", PostPK, id, "post not found", &p)
	s.learn(PostPK(id), p.Shards) // its counter says whether it has parts
	return p, err
}

// getCounted reads the entity of partition pk(id), counts included, into v
// after validating id.
func getCounted[T any, PT counted[T]](ctx context.Context, s *Store, op string, pk func(string) string, id, notFound string, v PT) error {
	if err := CheckIDs(op, id); err != nil {
		return err
	}
	found, err := readCounted(ctx, s, op, pk(id), false, v)
	if err == nil && !found {
		err = errs.E(op, errs.NotFound, notFound)
	}
	return err
}

// UserByHandle returns the user with the given handle, counts included
// (AP2): one Query on GSI1, where the user's counter item sits beside the
// profile. An absent handle is a NotFound error. GSI reads are eventually
// consistent: a profile created a moment ago may not be found yet.
func (s *Store) UserByHandle(ctx context.Context, handle string) (User, error) {
	const op = "store.UserByHandle"
	if !ValidHandle(handle) {
		return User{}, errs.E(op, errs.Validation, "invalid handle: "+HandleRule)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), Limit: aws.Int32(2)}
	if err := keyQuery(in, partition(AttrGSI1PK, handlePK(handle)), nil); err != nil {
		return User{}, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return User{}, Fail(op, err)
	}
	var u User
	found, err := decodeCounted(op, s, out.Items, &u)
	if err == nil && !found {
		err = errs.E(op, errs.NotFound, "user not found")
	}
	return u, err
}

// Users returns the users with ids, keyed by ID, absent ones missing (AP9):
// one BatchGetItem per 100 distinct keys, concurrently. Their counter items
// are read only with counts; without, counts are zero and not encoded.
func (s *Store) Users(ctx context.Context, ids []string, counts bool) (map[string]User, error) {
	users, err := getMany(ctx, s, "store.Users", ids, nil, counts, UserPK, func(u User) string { return u.ID })
	if !counts {
		for id, u := range users {
			u.uncounted = true
			users[id] = u
		}
	}
	return users, err
}

// Posts returns the posts with ids, keyed by ID, absent ones missing (AP10),
// costing as Users. With attrs only those attributes are read (and id), the
// counter items only when attrs name a count.
func (s *Store) Posts(ctx context.Context, ids []string, attrs ...string) (map[string]Post, error) {
	if attrs != nil {
		attrs = append([]string{"id"}, attrs...)
	}
	return getMany(ctx, s, "store.Posts", ids, attrs, SelectsCount(attrs, PostCounts), PostPK, func(p Post) string { return p.ID })
}

// PostsExist reports which of the posts exist: one BatchGetItem of their
// counter items' keys (half a read unit a post, whatever its size).
func (s *Store) PostsExist(ctx context.Context, ids []string) (map[string]bool, error) {
	const op = "store.PostsExist"
	if err := CheckIDs(op, ids...); err != nil {
		return nil, err
	}
	keys := make([]Key, len(ids))
	for i, id := range ids {
		keys[i] = Key{PostPK(id), SKCount}
	}
	found, err := s.BatchGet(ctx, op, keys, []string{})
	if err != nil {
		return nil, err
	}
	exist := make(map[string]bool, len(ids))
	for k := range found {
		exist[strings.TrimPrefix(k.PK, prefixPost)] = true
	}
	return exist, nil
}

// getMany reads the entities of partitions pk(id) by BatchGetItem, with
// their counter items when counts is true.
func getMany[T any, PT counted[T]](ctx context.Context, s *Store, op string, ids, attrs []string, counts bool, pk func(string) string, idOf func(T) string) (map[string]T, error) {
	if err := CheckIDs(op, ids...); err != nil {
		return nil, err
	}
	keys := make([]Key, 0, 2*len(ids))
	for _, id := range ids {
		keys = append(keys, Key{pk(id), SKMetadata})
		if counts {
			keys = append(keys, Key{pk(id), SKCount})
		}
	}
	items, err := s.BatchGet(ctx, op, keys, attrs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(ids))
	for key, item := range items {
		if key.SK != SKMetadata {
			continue
		}
		var v T
		if _, err := decodeCounted[T, PT](op, s, []map[string]types.AttributeValue{item, items[Key{key.PK, SKCount}]}, &v); err != nil {
			return nil, err
		}
		readOnly(&v, attrs)
		out[idOf(v)] = v
	}
	return out, nil
}

// Reading many items at once: BatchGetItem of at most 100 distinct keys a
// request, the chunks sent together, unprocessed keys retried with backoff
// and jitter until done or out of time.

// Key is an item's primary key.
type Key struct{ PK, SK string }

// Attributes are the key as a request names an item.
func (k Key) Attributes() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

func keyOf(item map[string]types.AttributeValue) (Key, bool) {
	pk, ok1 := item[AttrPK].(*types.AttributeValueMemberS)
	sk, ok2 := item[AttrSK].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return Key{}, false
	}
	return Key{pk.Value, sk.Value}, true
}

// maxBatchGetKeys is the most keys one BatchGetItem request takes.
const maxBatchGetKeys = 100

// Backoff for UnprocessedKeys: full jitter over an exponentially growing
// window, and a ceiling on the total time when the context has no deadline.
const (
	backoffBase     = 20 * time.Millisecond
	backoffCap      = time.Second
	noDeadlineLimit = 20 * time.Second
)

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

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff returns a random wait in [0, min(cap, base*2^attempt)).
func backoff(attempt int) time.Duration {
	window := backoffCap
	if attempt < 16 {
		window = min(backoffCap, backoffBase<<attempt)
	}
	return rand.N(window)
}
