package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// User returns the user with the given ID (AP1): one GetItem.
// An absent user is a NotFound error.
func (s *Store) User(ctx context.Context, id string) (User, error) {
	const op = "store.User"
	var u User
	return u, s.getItem(ctx, op, itemKey{UserPK(id), SKMetadata}, "user not found", &u, id)
}

// Post returns the post with the given ID (AP3): one GetItem.
// An absent post is a NotFound error.
func (s *Store) Post(ctx context.Context, id string) (Post, error) {
	const op = "store.Post"
	var p Post
	return p, s.getItem(ctx, op, itemKey{PostPK(id), SKMetadata}, "post not found", &p, id)
}

// getItem reads one item into v after validating ids.
func (s *Store) getItem(ctx context.Context, op string, key itemKey, notFound string, v any, ids ...string) error {
	if err := checkIDs(op, ids...); err != nil {
		return err
	}
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key.attributes()})
	if err != nil {
		return fail(op, err)
	}
	if out.Item == nil {
		return errs.E(op, errs.NotFound, notFound)
	}
	if err := attributevalue.UnmarshalMap(out.Item, v); err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return nil
}

// UserByHandle returns the user with the given handle (AP2): one Query on
// GSI1. An absent handle is a NotFound error. GSI reads are eventually
// consistent: a profile created a moment ago may not be found yet.
func (s *Store) UserByHandle(ctx context.Context, handle string) (User, error) {
	const op = "store.UserByHandle"
	if !ValidHandle(handle) {
		return User{}, errs.E(op, errs.Validation, "invalid handle: must match ^[a-z0-9_]{3,30}$")
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), Limit: aws.Int32(1)}
	if err := keyQuery(in, partition(AttrGSI1PK, HandlePK(handle)), nil); err != nil {
		return User{}, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return User{}, fail(op, err)
	}
	if len(out.Items) == 0 {
		return User{}, errs.E(op, errs.NotFound, "user not found")
	}
	var u User
	if err := attributevalue.UnmarshalMap(out.Items[0], &u); err != nil {
		return User{}, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return u, nil
}

// Users returns the users with the given IDs, keyed by ID; absent users are
// missing from the map (AP9). Duplicate IDs are read once. Cost: one
// BatchGetItem per 100 distinct IDs (run concurrently), plus retries of
// unprocessed keys.
func (s *Store) Users(ctx context.Context, ids []string) (map[string]User, error) {
	return getMany[User](ctx, s, "store.Users", ids, nil, func(id string) itemKey { return itemKey{UserPK(id), SKMetadata} },
		func(u User) string { return u.ID })
}

// Posts returns the posts with the given IDs, keyed by ID; absent posts are
// missing from the map (AP10). Cost as for Users. With attrs, only those
// attributes of each post are read (and its id): a post's body is up to
// 20,000 characters, often not selected.
func (s *Store) Posts(ctx context.Context, ids []string, attrs ...string) (map[string]Post, error) {
	if attrs != nil {
		attrs = append([]string{"id"}, attrs...)
	}
	return getMany[Post](ctx, s, "store.Posts", ids, attrs, func(id string) itemKey { return itemKey{PostPK(id), SKMetadata} },
		func(p Post) string { return p.ID })
}

func getMany[T any](ctx context.Context, s *Store, op string, ids []string, attrs []string, key func(string) itemKey, idOf func(T) string) (map[string]T, error) {
	if err := checkIDs(op, ids...); err != nil {
		return nil, err
	}
	keys := make([]itemKey, len(ids))
	for i, id := range ids {
		keys[i] = key(id)
	}
	items, err := s.batchGet(ctx, op, keys, attrs)
	if err != nil {
		return nil, err
	}
	out := make(map[string]T, len(items))
	for _, item := range items {
		var v T
		if err := attributevalue.UnmarshalMap(item, &v); err != nil {
			return nil, errs.Wrap(op, errs.Internal, "internal error", err)
		}
		readOnly(&v, attrs)
		out[idOf(v)] = v
	}
	return out, nil
}

// The connections. Each is one Query of one partition (queryPage); which
// partition, index, sort-key range and order is said once, in query.go.

// PostsByAuthor returns a page of the author's published posts by
// publication time, newest first unless page says otherwise (AP4), or, with
// drafts, of the author's drafts by creation time (AP4d): one Query on GSI1,
// the status in the sort key's prefix, the range in the key condition.
// Whether the caller may see drafts is the caller's to decide.
func (s *Store) PostsByAuthor(ctx context.Context, authorID string, drafts bool, page PageRequest) (Page[Post], error) {
	status := ""
	if drafts {
		status = "status=" + StatusDraft
	}
	return queryPage[Post](ctx, s, postsByAuthor(authorID, drafts).shaped(page, status), page)
}

// CommentsOnPost returns a page of the post's comments, oldest first unless
// page says otherwise (AP5): one Query on the post's partition.
func (s *Store) CommentsOnPost(ctx context.Context, postID string, page PageRequest) (Page[Comment], error) {
	return queryPage[Comment](ctx, s, commentsOnPost(postID).shaped(page, ""), page)
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

// Followers returns a page of the follows made to the user, ordered by the
// follower's ID (AP8): one Query on GSI2.
func (s *Store) Followers(ctx context.Context, userID string, page PageRequest) (Page[Follow], error) {
	return queryPage[Follow](ctx, s, followers(userID), page)
}
