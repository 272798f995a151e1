package store

import (
	"cmp"
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Comments: written with their post's count, in the post's partition (or
// where its Spread puts them); deleted by their author or the post's.

// CreateComment adds a comment by authorID to the published post and adds 1
// to its commentCount, in one transaction that requires the post and the
// author's profile (NotFound, nothing written). The comment is returned as
// written, its ID the Spread's where it chose one.
func (s *Store) CreateComment(ctx context.Context, authorID, postID, body string) (Comment, error) {
	const op = "store.CreateComment"
	if err := CheckIDs(op, authorID, postID); err != nil {
		return Comment{}, err
	}
	now := s.now()
	id := s.newID(now)
	postPK, authorPK := PostPK(postID), UserPK(authorID)
	notFound := errs.E(op, errs.NotFound, "post not found")
	var c Comment
	err := s.add(ctx, KindComments, postID, id, notFound, func(ctx context.Context, place Place) error {
		c = Comment{ID: cmp.Or(place.ID, id), PostID: postID, AuthorID: authorID, Body: body, CreatedAt: timestamp(now)}
		av, err := marshal(op, newCommentItem(c))
		if err != nil {
			return err
		}
		if place.Partition != "" {
			av[AttrPK] = str(place.Partition)
		}
		return s.transact(ctx, op,
			s.put(av, func(map[string]types.AttributeValue) error {
				return errs.E(op, errs.Conflict, "comment ID collision; retry")
			}),
			published(s.countOn(KindComments, place, postPK, "commentCount", countUp, notFound, nil)),
			s.exists(authorPK, SKCount, onCounter(errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	})
	if err != nil {
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
	// In the post's own partition, or where its Spread put it.
	var c Comment
	pk, place := PostPK(postID), Place{}
	found, err := s.GetConsistent(ctx, op, Key{pk, CommentSK(id)}, &c)
	if err == nil && !found {
		if place = s.locate(KindComments, postID, id, ""); place.Partition != "" {
			pk = place.Partition
			found, err = s.GetConsistent(ctx, op, Key{pk, CommentSK(id)}, &c)
		}
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
	// Counted on the post's counter, or at the comment's place (whose part
	// counter holds the post's author too).
	decrement := s.countOn(KindComments, place, PostPK(postID), "commentCount", countDown, notFound, notAllowed)
	if c.AuthorID == callerID {
		err = s.transact(ctx, op, onlyIf(deleteComment, "authorId", callerID), decrement)
	} else {
		err = s.transact(ctx, op, deleteComment, onlyIf(decrement, "authorId", callerID)) // the post's author: on its counter
	}
	if err == nil {
		s.wrote(ctx, place)
	}
	if err != nil {
		return Comment{}, err
	}
	return c, nil
}
