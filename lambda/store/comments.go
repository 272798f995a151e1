package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Comments: written with their post's count, in the post's partition or,
// once it is hot, in one of its shards; deleted by their author or the
// post's.

// CreateComment adds a comment by authorID to the post and increments its
// commentCount, in one transaction conditioned on the post being published
// and the author's profile existing (both checked on their counter items) (NotFound otherwise, and nothing is
// written): a comment whose author has no profile would make every read of
// its author fail, and a draft takes no comments.
//
// A hot post's comment goes to one of its shards (commentHot); the comment
// that finds HotThreshold comments on a post's counter turns it hot first.
func (s *Store) CreateComment(ctx context.Context, authorID, postID, body string) (Comment, error) {
	const op = "store.CreateComment"
	if err := CheckIDs(op, authorID, postID); err != nil {
		return Comment{}, err
	}
	now := s.now()
	c := Comment{ID: s.newID(now), PostID: postID, AuthorID: authorID, Body: body, CreatedAt: timestamp(now)}
	if s.hot.of(postID) > 0 {
		return s.commentHot(ctx, op, c)
	}
	av, err := marshal(op, newCommentItem(c))
	if err != nil {
		return Comment{}, err
	}
	postPK, authorPK := PostPK(postID), UserPK(authorID)
	notFound := errs.E(op, errs.NotFound, "post not found")
	err = s.counting(ctx, op, func() error {
		return s.transact(ctx, op,
			s.put(av, func(map[string]types.AttributeValue) error {
				return errs.E(op, errs.Conflict, "comment ID collision; retry")
			}),
			notHot(s.belowThreshold(published(s.addCount(postPK, SKCount, "commentCount", countUp, onCounter(postPK, notFound, nil))), "commentCount")),
			s.exists(authorPK, SKCount, onCounter(authorPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	})
	var hot *errHot
	switch {
	case errors.Is(err, errPastThreshold): // the post turns hot, and takes the comment in a shard
		if err := s.MakeHot(ctx, postID); err != nil {
			return Comment{}, err
		}
		if s.hot.of(postID) == 0 { // not published: MakeHot leaves it
			return Comment{}, notFound
		}
		return s.commentHot(ctx, op, c)
	case errors.As(err, &hot): // turned hot since this store last knew
		s.hot.learn(postID, hot.shards)
		return s.commentHot(ctx, op, c)
	case err != nil:
		return Comment{}, err
	}
	return c, nil
}

// DeleteComment deletes the comment and decrements its post's commentCount
// in one transaction, if callerID is the comment's author or the post's
// author: the transaction's condition checks whichever applies. It returns
// the deleted comment; NotFound when absent, Unauthorized for anyone else.
func (s *Store) DeleteComment(ctx context.Context, callerID, postID, id string) (Comment, error) {
	const op = "store.DeleteComment"
	if err := CheckIDs(op, callerID, postID, id); err != nil {
		return Comment{}, err
	}
	// In the post's own partition, or (a hot post's) in its shard.
	var c Comment
	pk := PostPK(postID)
	found, err := s.GetConsistent(ctx, op, Key{pk, CommentSK(id)}, &c)
	if err == nil && !found {
		pk = ShardPK(postID, commentShard(id))
		found, err = s.GetConsistent(ctx, op, Key{pk, CommentSK(id)}, &c)
	}
	if err != nil {
		return Comment{}, err
	}
	if !found {
		return Comment{}, errs.E(op, errs.NotFound, "comment not found")
	}
	notAllowed := errs.E(op, errs.Unauthorized, "only the comment's author or the post's author may delete it")
	notFound := errs.E(op, errs.NotFound, "post not found")
	deleteComment := s.remove(pk, CommentSK(id), notFoundOr(op, "comment not found", nil))
	decrement := s.addCount(pk, SKCount, "commentCount", countDown, onCounter(pk, notFound, notAllowed))
	if pk != PostPK(postID) { // counted on the shard's counter, which holds the post's author too
		decrement = s.shardCount(pk, "commentCount", countDown, notFound)
		decrement.failed = notFoundOr(op, "post not found", notAllowed)
	}
	transact := func() error {
		if c.AuthorID == callerID {
			return s.transact(ctx, op, onlyIf(deleteComment, "authorId", callerID), decrement)
		}
		return s.transact(ctx, op, deleteComment, onlyIf(decrement, "authorId", callerID)) // the post's author: on its counter
	}
	if pk == PostPK(postID) {
		err = s.counting(ctx, op, transact)
	} else if err = transact(); err == nil {
		s.ownCount(ctx, pk)
	}
	if err != nil {
		return Comment{}, err
	}
	return c, nil
}
