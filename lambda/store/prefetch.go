package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// Prefetch holds the first items of a connection, read together with its
// parent. A child resolver turns it into the page it was asked for with
// FromPrefetch, without a request, when the prefetch covers that page.
type Prefetch[T any] struct {
	Parent string `json:"parent"` // the parent's ID
	Items  []T    `json:"items"`  // the connection's first items, in order
	// Complete is true when Items holds the whole connection. When it is
	// false, more items follow the last one; Items may then be fewer than were
	// asked for (DynamoDB's 1 MB read limit, or the byte budget).
	Complete bool `json:"complete"`
}

// PostWithComments reads a post and up to limit+1 of its first comments with
// one Query of its partition: "#METADATA" sorts before "COMMENT#", so the
// post comes first (AP3 and AP5 in one request). An absent post is NotFound.
//
// The post and the comments kept with it take at most maxBytes encoded (the
// post always stays; comments beyond the budget are left for the child's own
// Query).
func (s *Store) PostWithComments(ctx context.Context, id string, limit, maxBytes int) (Post, Prefetch[Comment], error) {
	const op = "store.PostWithComments"
	var p Post
	pre, err := withChildren[Comment](ctx, s, op, PostPK(id), id, limit, maxBytes, &p, "post not found")
	return p, pre, err
}

// UserWithFollowing reads a user and up to limit+1 of the follows it made
// with one Query of its partition ("#METADATA" sorts before "FOLLOWS#"),
// keeping follows within maxBytes as PostWithComments does. An absent user is
// NotFound.
func (s *Store) UserWithFollowing(ctx context.Context, id string, limit, maxBytes int) (User, Prefetch[Follow], error) {
	const op = "store.UserWithFollowing"
	var u User
	pre, err := withChildren[Follow](ctx, s, op, UserPK(id), id, limit, maxBytes, &u, "user not found")
	return u, pre, err
}

// prefetchEnvelope is what a prefetch adds to its parent's encoding besides
// its items: the member's name, the parent's ID and the flags.
const prefetchEnvelope = 200

// withChildren queries partition pk for its metadata item (decoded into
// parent) and the first limit+1 children after it, keeping the children that
// fit in maxBytes together with the parent.
func withChildren[T any](ctx context.Context, s *Store, op, pk, id string, limit, maxBytes int, parent any, notFound string) (Prefetch[T], error) {
	if err := checkIDs(op, id); err != nil {
		return Prefetch[T]{}, err
	}
	if limit < 1 || limit > MaxLimit {
		return Prefetch[T]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	out, err := s.api.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.table),
		KeyConditionExpression:    aws.String("#pk = :pk"),
		ExpressionAttributeNames:  map[string]string{"#pk": AttrPK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pk)},
		Limit:                     aws.Int32(int32(limit + 2)), // the parent, a page, and one to know if more follow
	})
	if err != nil {
		return Prefetch[T]{}, fail(op, err)
	}
	if len(out.Items) == 0 || !isMetadata(out.Items[0]) {
		return Prefetch[T]{}, errs.E(op, errs.NotFound, notFound)
	}
	if err := unmarshal(op, out.Items[0], parent); err != nil {
		return Prefetch[T]{}, err
	}
	children := out.Items[1:]
	pre := Prefetch[T]{Parent: id, Items: make([]T, len(children)),
		Complete: len(children) <= limit && len(out.LastEvaluatedKey) == 0}
	if err := attributevalue.UnmarshalListOfMaps(children, &pre.Items); err != nil {
		return Prefetch[T]{}, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	room := maxBytes - payload.Size(parent) - prefetchEnvelope
	if n := fitBytes(pre.Items, room); n < len(pre.Items) {
		pre.Items, pre.Complete = pre.Items[:n], false
	}
	return pre, nil
}

func isMetadata(item map[string]types.AttributeValue) bool {
	sk, ok := item[AttrSK].(*types.AttributeValueMemberS)
	return ok && sk.Value == SKMetadata
}

// CommentsFromPrefetch returns the page CommentsOnPost(p.Parent, req) would
// return, built from p with no request, nextToken included; false when p
// does not hold that page (a later page, or more items than were prefetched).
func (s *Store) CommentsFromPrefetch(p Prefetch[Comment], req PageRequest) (Page[Comment], bool) {
	return fromPrefetch(s, p, req, commentsOnPost(p.Parent).scope,
		func(c Comment) itemKey { return itemKey{PostPK(c.PostID), CommentSK(c.ID)} })
}

// FollowingFromPrefetch is CommentsFromPrefetch for Following.
func (s *Store) FollowingFromPrefetch(p Prefetch[Follow], req PageRequest) (Page[Follow], bool) {
	return fromPrefetch(s, p, req, following(p.Parent).scope,
		func(f Follow) itemKey { return itemKey{UserPK(f.FollowerID), FollowsSK(f.FollowedID)} })
}

func fromPrefetch[T any](s *Store, p Prefetch[T], req PageRequest, scope cursor.Scope, keyOf func(T) itemKey) (Page[T], bool) {
	if req.NextToken != "" || req.Limit < 1 {
		return Page[T]{}, false
	}
	page := Page[T]{Items: p.Items, after: func(i int) (string, error) {
		return s.tokens.Encode(scope, keyOf(p.Items[i]).attributes())
	}}
	if page.Items == nil {
		page.Items = []T{}
	}
	switch {
	case len(p.Items) > req.Limit:
		page, err := page.Cut(req.Limit)
		return page, err == nil
	case p.Complete:
		return page, true
	case len(p.Items) > 0:
		// A prefetch cut short (by bytes or DynamoDB's 1 MB) is a short page:
		// the connection resumes after its last item.
		token, err := page.after(len(p.Items) - 1)
		if err != nil {
			return Page[T]{}, false
		}
		page.NextToken = &token
		return page, true
	}
	return Page[T]{}, false
}
