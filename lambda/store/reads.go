package store

import (
	"context"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

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
