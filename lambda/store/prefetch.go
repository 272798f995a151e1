package store

import (
	"context"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// The pattern's prefetch: a parent read together with the first page of
// one of its connections (one Query of its partition), and pages served
// from what it read.

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
	// Limit is how many items the read asked for: a page of at most Limit
	// items serves from an incomplete prefetch (shorter only where bytes cut
	// it), a larger page does not.
	Limit int `json:"limit,omitempty"`
	// Args are the order and range the items were read in
	// (PageRequest.args): only a page asked with the same serves from them.
	Args string `json:"args,omitempty"`
}

// AppendJSON appends the prefetch as encoding/json encodes it, each item
// with appendItem (a method expression such as Comment.AppendJSON).
func (p Prefetch[T]) AppendJSON(dst []byte, appendItem func(T, []byte) []byte) []byte {
	dst = payload.AppendString(append(dst, `{"parent":`...), p.Parent)
	dst = append(dst, `,"items":`...)
	if p.Items == nil {
		dst = append(dst, "null"...)
	} else {
		dst = append(dst, '[')
		for i, item := range p.Items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = appendItem(item, dst)
		}
		dst = append(dst, ']')
	}
	dst = strconv.AppendBool(append(dst, `,"complete":`...), p.Complete)
	if p.Limit != 0 {
		dst = strconv.AppendInt(append(dst, `,"limit":`...), int64(p.Limit), 10)
	}
	if p.Args != "" {
		dst = payload.AppendString(append(dst, `,"args":`...), p.Args)
	}
	return append(dst, '}')
}

// PostWithComments reads a post and up to first.Limit+1 of its first
// comments, kept within maxBytes with the post: one Query of its partition
// oldest first from the start, else two at once. An absent post is NotFound;
// a hot post's prefetch holds no comment (docs/pattern.md).
func (s *Store) PostWithComments(ctx context.Context, id string, first PageRequest, maxBytes int) (Post, Prefetch[Comment], error) {
	const op = "store.PostWithComments"
	var (
		p   Post
		pre Prefetch[Comment]
		err error
	)
	q := commentsOnPost(id).shaped(first, "")
	if q.newestFirst || !first.After.IsZero() {
		pre, err = apart[Comment](ctx, s, op, q, first, maxBytes, &p, func(ctx context.Context) error {
			return getCounted(ctx, s, op, PostPK, id, "post not found", &p)
		})
	} else {
		pre, err = withChildren[Comment](ctx, s, op, q, first.Limit, maxBytes, &p, "post not found")
	}
	if err == nil && p.Shards > 0 {
		// A hot post's comments are in its parts too (its Spread's): none
		// of them are prefetched, and the child reads them (CommentsOnPost).
		s.learn(PostPK(id), p.Shards)
		pre = Prefetch[Comment]{Parent: id, Items: []Comment{}, Limit: first.Limit, Args: q.scope.Args}
	}
	return p, pre, err
}

// UserWithFollowing reads a user and up to limit+1 of the follows it made
// with one Query of its partition ("#METADATA" sorts before "FOLLOWS#"),
// keeping follows within maxBytes as PostWithComments does. An absent user is
// NotFound.
func (s *Store) UserWithFollowing(ctx context.Context, id string, limit, maxBytes int) (User, Prefetch[Follow], error) {
	const op = "store.UserWithFollowing"
	var u User
	pre, err := withChildren[Follow](ctx, s, op, following(id), limit, maxBytes, &u, "user not found")
	return u, pre, err
}

// apart reads the parent (readParent, into parent) and the first page of q
// at the same time, for a connection whose range does not start at its
// parent.
func apart[T any](ctx context.Context, s *Store, op string, q partitionQuery, first PageRequest, maxBytes int, parent any, readParent func(context.Context) error) (Prefetch[T], error) {
	if err := CheckIDs(op, q.scope.Parent); err != nil {
		return Prefetch[T]{}, err
	}
	var (
		getErr  error
		page    Page[T]
		pageErr error
		wg      sync.WaitGroup
	)
	branch := cost.Together(ctx) // the parent's read and the Query are sent at once
	getCtx, queryCtx := branch(), branch()
	wg.Go(func() { getErr = readParent(getCtx) })
	first.NextToken, first.MaxBytes = "", 0
	page, pageErr = queryPage[T](queryCtx, s, q, first)
	wg.Wait()
	switch {
	case getErr != nil:
		return Prefetch[T]{}, getErr
	case pageErr != nil:
		return Prefetch[T]{}, pageErr
	}
	pre := Prefetch[T]{Parent: q.scope.Parent, Items: page.Items, Complete: page.NextToken == nil, Limit: first.Limit, Args: q.scope.Args}
	keepFitting(&pre, maxBytes-payload.Size(parent)-prefetchEnvelope)
	return pre, nil
}

// keepFitting keeps the items of pre that fit in room bytes.
func keepFitting[T any](pre *Prefetch[T], room int) {
	if n := fitBytes(pre.Items, room); n < len(pre.Items) {
		pre.Items, pre.Complete = pre.Items[:n], false
	}
}

// prefetchEnvelope is what a prefetch adds to its parent's encoding besides
// its items: the member's name, the parent's ID and the flags.
const prefetchEnvelope = 200

// withChildren queries q's partition for its counter and metadata items
// (into parent) and the first limit+1 children after them, keeping those
// that fit in maxBytes with the parent; what sorts after them is not read.
func withChildren[T any, P any, PP counted[P]](ctx context.Context, s *Store, op string, q partitionQuery, limit, maxBytes int, parent PP, notFound string) (Prefetch[T], error) {
	id := q.scope.Parent
	out, err := prefetchItems(ctx, s, op, q, limit)
	if err != nil {
		return Prefetch[T]{}, err
	}
	own := 0 // the parent's items: its counter, if any, and its metadata
	for own < len(out.Items) && own < 2 && strings.HasPrefix(sortKey(out.Items[own]), "#") {
		own++
	}
	found, err := decodeCounted[P, PP](op, s, out.Items[:own], parent)
	if err != nil {
		return Prefetch[T]{}, err
	}
	if !found {
		return Prefetch[T]{}, errs.E(op, errs.NotFound, notFound)
	}
	children := out.Items[own:]
	complete := len(children) <= limit && len(out.LastEvaluatedKey) == 0
	if len(children) > limit+1 { // the parent had no counter: one more child than the page needs
		children = children[:limit+1]
	}
	pre := Prefetch[T]{Parent: id, Items: make([]T, len(children)), Complete: complete, Limit: limit, Args: q.scope.Args}
	if err := attributevalue.UnmarshalListOfMaps(children, &pre.Items); err != nil {
		return Prefetch[T]{}, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	keepFitting(&pre, maxBytes-payload.Size(parent)-prefetchEnvelope)
	return pre, nil
}

// prefetchItems sends withChildren's Query. It is apart from withChildren so
// that the request is built once in the binary, not once for each item type.
func prefetchItems(ctx context.Context, s *Store, op string, q partitionQuery, limit int) (*dynamodb.QueryOutput, error) {
	if err := CheckIDs(op, q.scope.Parent); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxLimit {
		return nil, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	in := &dynamodb.QueryInput{
		TableName: aws.String(s.table),
		Limit:     aws.Int32(int32(limit + 3)), // the counter, the parent, a page, and one to know if more follow
	}
	hi := q.hi
	if hi == "" {
		hi = q.skPrefix + "~" // "~" sorts after every ID character
	}
	// An upper bound only: the counter and metadata items sort first, inside it.
	cond := partition(AttrPK, q.pk).And(expression.Key(AttrSK).LessThanEqual(expression.Value(hi)))
	if err := keyQuery(in, cond, nil); err != nil {
		return nil, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, Fail(op, err)
	}
	return out, nil
}

// CommentsShape returns the order and range of a page of a post's comments
// as a prefetch read for it records them (Prefetch.Args): "" for the
// defaults, however they were asked for.
func CommentsShape(req PageRequest) string { return commentsOnPost("").shaped(req, "").scope.Args }

// CommentsFromPrefetch returns the page CommentsOnPost(p.Parent, req) would
// return, built from p with no request, nextToken included; false when p
// does not hold that page (a later page, or more items than were prefetched).
func (s *Store) CommentsFromPrefetch(p Prefetch[Comment], req PageRequest) (Page[Comment], bool) {
	return fromPrefetch(s, p, req, commentsOnPost(p.Parent).shaped(req, "").scope,
		func(c Comment) Key { return Key{PostPK(c.PostID), CommentSK(c.ID)} })
}

// FollowingFromPrefetch is CommentsFromPrefetch for Following.
func (s *Store) FollowingFromPrefetch(p Prefetch[Follow], req PageRequest) (Page[Follow], bool) {
	return fromPrefetch(s, p, req, following(p.Parent).shaped(req, "").scope,
		func(f Follow) Key { return Key{UserPK(f.FollowerID), FollowsSK(f.FollowedID)} })
}

func fromPrefetch[T any](s *Store, p Prefetch[T], req PageRequest, scope cursor.Scope, keyOf func(T) Key) (Page[T], bool) {
	if req.NextToken != "" || req.Limit < 1 || scope.Args != p.Args {
		return Page[T]{}, false
	}
	page := Page[T]{Items: p.Items, after: func(i int) (string, error) {
		return s.tokens.Encode(scope, keyOf(p.Items[i]).Attributes())
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
	case len(p.Items) > 0 && req.Limit <= p.Limit:
		// A prefetch cut short (by bytes or DynamoDB's 1 MB) is a short page:
		// the connection resumes after its last item. One read for fewer
		// items than the page asks for (another occurrence's smaller page)
		// is no page of this size: the child queries.
		token, err := page.after(len(p.Items) - 1)
		if err != nil {
			return Page[T]{}, false
		}
		page.NextToken = &token
		return page, true
	}
	return Page[T]{}, false
}
