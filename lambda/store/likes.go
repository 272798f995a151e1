package store

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Likes. A like is two items written together: the like in the post's
// partition (LIKE#<ULID>, listed newest first) and its guard in the liker's
// partition (LIKED#<postId>), whose condition makes liking twice change
// nothing and which finds the like again to undo it; the post's likeCount is
// on its counter item. A like costs the same on every post.

// LikePost records that userID likes the published post and adds 1 to its
// likeCount, in one transaction that requires the post published and the
// user's profile (NotFound otherwise), and returns the post as attrs need it.
// Liking again changes nothing.
func (s *Store) LikePost(ctx context.Context, userID, postID string, attrs []string) (Post, error) {
	const op = "store.LikePost"
	if err := CheckIDs(op, userID, postID); err != nil {
		return Post{}, err
	}
	now := s.now()
	notFound := errs.E(op, errs.NotFound, "post not found")
	postPK, userPK := PostPK(postID), UserPK(userID)
	id := s.newID(now)
	err := s.add(ctx, KindLikes, postID, id, notFound, func(ctx context.Context, place Place) error {
		l := Like{ID: id, PostID: postID, UserID: userID, LikedAt: timestamp(now), Partition: place.Partition}
		like, err := marshal(op, newLikeItem(l))
		if err != nil {
			return err
		}
		guard, err := marshal(op, newLikedItem(l))
		if err != nil {
			return err
		}
		return s.transact(ctx, op,
			s.put(guard, func(map[string]types.AttributeValue) error { return errExists }),
			s.put(like, func(map[string]types.AttributeValue) error {
				return errs.E(op, errs.Conflict, "like ID collision; retry")
			}),
			published(s.countOn(KindLikes, place, postPK, "likeCount", countUp, notFound, nil)),
			s.exists(userPK, SKCount, onCounter(errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	})
	if err != nil && !errors.Is(err, errExists) { // liked already: nothing to change
		return Post{}, err
	}
	p, err := s.postAfterWrite(ctx, op, userID, postID, attrs)
	if err == nil && s.spread != nil && p.Shards == 0 {
		s.spread.Grew(ctx, KindLikes, postID, p.LikeCount+p.CommentCount)
	}
	return p, err
}

// UnlikePost removes userID's like of the post and decrements its likeCount,
// in one transaction, and returns the post as LikePost does. With no like to
// remove it changes nothing; an absent post (or someone else's draft) is
// NotFound.
func (s *Store) UnlikePost(ctx context.Context, userID, postID string, attrs []string) (Post, error) {
	const op = "store.UnlikePost"
	if err := CheckIDs(op, userID, postID); err != nil {
		return Post{}, err
	}
	var l Like
	found, err := s.GetConsistent(ctx, op, Key{UserPK(userID), LikedSK(postID)}, &l)
	if err != nil {
		return Post{}, err
	}
	if found {
		postPK := PostPK(postID)
		// The guard of the like read: another one (unliked and liked again
		// meanwhile) is another like, not this one to undo.
		guard := onlyIf(s.remove(UserPK(userID), LikedSK(postID), func(map[string]types.AttributeValue) error { return errExists }), "id", l.ID)
		place := s.locate(KindLikes, postID, l.ID, l.Partition) // counted where it is
		pk := cmp.Or(place.Partition, postPK)
		err = s.transact(ctx, op, guard, always(s.remove(pk, LikeSK(l.ID), nil)),
			s.countOn(KindLikes, place, postPK, "likeCount", countDown, errs.E(op, errs.NotFound, "post not found"), nil))
		if err == nil {
			s.wrote(ctx, place)
		}
		if err != nil && !errors.Is(err, errExists) { // undone by a concurrent unlike: done
			return Post{}, err
		}
	}
	return s.postAfterWrite(ctx, op, userID, postID, attrs)
}

// counterAfterWrite is the counter of the post of partition pk after a
// write on it: as the Spread keeps it for a post whose counter many writes
// change (its counts as the projector added them, read at most once a
// second), or read strongly consistent.
func (s *Store) counterAfterWrite(ctx context.Context, op, pk string) (Post, bool, error) {
	var c Post
	if s.spread != nil {
		item, found, kept, err := s.spread.Counter(ctx, op, pk)
		if err != nil || kept {
			if err == nil && found {
				err = unmarshal(op, item, &c)
				c.Hot = s.tallies(pk, c.Hot)
			}
			return c, found, err
		}
	}
	found, err := s.GetConsistent(ctx, op, Key{pk, SKCount}, &c)
	return c, found, err
}

// onCounterItem are the post's attributes its counter item holds as well:
// its ID (in the item's key), and those of postCounterItem's attributes
// that are the post's.
var onCounterItem = append([]string{"id"}, slices.DeleteFunc(tagNames[postCounterItem]("dynamodbav"), func(a string) bool { return !isPostAttribute(a) })...)

// postAfterWrite reads, strongly consistent, the post a write on its counter
// answers with: only the counter item when attrs name nothing else of the
// post's, otherwise both items. An absent post, or one caller may not see,
// is NotFound.
func (s *Store) postAfterWrite(ctx context.Context, op, caller, id string, attrs []string) (Post, error) {
	var p Post
	found := false
	if attrs != nil && !slices.ContainsFunc(attrs, func(a string) bool { return isPostAttribute(a) && !slices.Contains(onCounterItem, a) }) {
		c, got, err := s.counterAfterWrite(ctx, op, PostPK(id))
		if err != nil {
			return Post{}, err
		}
		if found = got; found {
			p = Post{ID: id, AuthorID: c.AuthorID, Status: c.Status, read: onCounterItem}
			p.add(c)
		}
	}
	if !found {
		var err error
		if found, err = readCounted(ctx, s, op, PostPK(id), true, &p); err != nil {
			return Post{}, err
		}
	}
	if !found || !p.VisibleTo(caller) {
		return Post{}, errs.E(op, errs.NotFound, "post not found")
	}
	return p, nil
}

// isPostAttribute reports whether name is an attribute of a post's item
// that is one of the schema's fields (schemaAttributes).
func isPostAttribute(name string) bool { return slices.Contains(postAttributes, name) }

var postAttributes = schemaAttributes[Post]()

// LikedBy reports which of the posts userID likes: one BatchGetItem of the
// guards' keys per 100 posts, strongly consistent (one read unit each), so
// that a caller who just liked a post reads it liked.
func (s *Store) LikedBy(ctx context.Context, userID string, postIDs []string) (map[string]bool, error) {
	const op = "store.LikedBy"
	if err := CheckIDs(op, append([]string{userID}, postIDs...)...); err != nil {
		return nil, err
	}
	keys := make([]Key, len(postIDs))
	for i, id := range postIDs {
		keys[i] = Key{UserPK(userID), LikedSK(id)}
	}
	found, err := s.batchRead(ctx, op, keys, []string{}, true)
	if err != nil {
		return nil, err
	}
	liked := make(map[string]bool, len(found))
	for i, k := range keys {
		if _, ok := found[k]; ok {
			liked[postIDs[i]] = true
		}
	}
	return liked, nil
}
