package store

import (
	"context"
	"errors"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Follows: both users' counts changed with the follow in one transaction;
// an unfollow removes the follow it read, never one made again since.

// Follow records that followerID follows followedID and increments both
// users' counts, in one transaction. Following again changes nothing and
// returns the existing follow. Following yourself is a Validation error; an
// unknown user is NotFound.
func (s *Store) Follow(ctx context.Context, followerID, followedID string) (Follow, error) {
	const op = "store.Follow"
	if err := CheckIDs(op, followerID, followedID); err != nil {
		return Follow{}, err
	}
	if followerID == followedID {
		return Follow{}, errs.E(op, errs.Validation, "you cannot follow yourself")
	}
	now := s.now()
	f := Follow{FollowerID: followerID, FollowedID: followedID, CreatedAt: timestamp(now)}
	version := s.newID(now)
	var existing map[string]types.AttributeValue
	err := s.add(ctx, KindFollowers, followedID, followerID, errs.E(op, errs.NotFound, "user not found"), func(ctx context.Context, place Place) error {
		item := newFollowItem(f)
		item.Version = version
		if place.Partition != "" { // its GSI2 entry in the followed user's part
			item.GSI2PK = place.Partition
		}
		av, err := marshal(op, item)
		if err != nil {
			return err
		}
		return s.transact(ctx, op, append([]txAction{s.put(av, func(old map[string]types.AttributeValue) error { existing = old; return errExists })},
			s.followCounts(op, followerID, followedID, place, countUp)...)...)
	})
	if errors.Is(err, errExists) {
		var old Follow
		return old, unmarshal(op, existing, &old)
	}
	if err != nil {
		return Follow{}, err
	}
	return f, nil
}

// Unfollow removes the follow it reads and takes 1 from both users' counts,
// in one transaction conditioned on its version, and returns it; (nil, nil)
// when there was none. A follow made again meanwhile is left, as if this
// ran before it.
func (s *Store) Unfollow(ctx context.Context, followerID, followedID string) (*Follow, error) {
	const op = "store.Unfollow"
	if err := CheckIDs(op, followerID, followedID); err != nil {
		return nil, err
	}
	var item followItem
	found, err := s.GetConsistent(ctx, op, Key{UserPK(followerID), FollowsSK(followedID)}, &item)
	if err != nil || !found {
		return nil, err
	}
	f := item.Follow
	remove := onlyIf(s.remove(UserPK(followerID), FollowsSK(followedID), func(map[string]types.AttributeValue) error { return errExists }),
		AttrGSI2PK, item.GSI2PK)
	remove.cond = asRead(remove.cond, "v", item.Version)
	place := s.locate(KindFollowers, followedID, "", item.GSI2PK) // counted where its GSI2 entry is
	err = s.transact(ctx, op, append([]txAction{remove}, s.followCounts(op, followerID, followedID, place, countDown)...)...)
	if err == nil {
		s.wrote(ctx, place)
	}
	if errors.Is(err, errExists) { // removed by a concurrent unfollow, perhaps followed again since
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// followCounts are the actions adding delta to the follower's followingCount
// and the followed user's followerCount, on their counter items (the
// latter's where the follow is: place).
func (s *Store) followCounts(op, followerID, followedID string, place Place, delta int) []txAction {
	followerPK := UserPK(followerID)
	return []txAction{
		s.addCount(followerPK, SKCount, "followingCount", delta, onCounter(errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)),
		s.countOn(KindFollowers, place, UserPK(followedID), "followerCount", delta, errs.E(op, errs.NotFound, "user not found"), nil),
	}
}

// FollowerIDs returns every follower of the user: Query pages of GSI2's
// sort keys (and its Spread's partitions, a hot user's shards).
func (s *Store) FollowerIDs(ctx context.Context, userID string) ([]string, error) {
	const op = "store.FollowerIDs"
	if err := CheckIDs(op, userID); err != nil {
		return nil, err
	}
	var ids []string
	err := allChildren(ctx, s, followers(userID), []string{AttrGSI2SK}, func(item Item) bool {
		if id, ok := strings.CutPrefix(stringAttr(item, AttrGSI2SK), prefixFollower); ok && ValidID(id) { // not a marker
			ids = append(ids, id)
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return ids, nil
}

// Follows reports whether followerID follows followedID (strongly
// consistent GetItem).
func (s *Store) Follows(ctx context.Context, followerID, followedID string) (bool, error) {
	const op = "store.Follows"
	if err := CheckIDs(op, followerID, followedID); err != nil {
		return false, err
	}
	var f Follow
	return s.GetConsistent(ctx, op, Key{UserPK(followerID), FollowsSK(followedID)}, &f)
}
