package store

import (
	"context"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Hot users. A follow's GSI2 entry lands in the followed user's one GSI2
// partition (FOLLOWERS#<id>), and the follow adds to the user's counter
// (and its copy in GSI1 under HANDLE#<handle>): 2 units on each of three
// partitions a follow, 500 follows a second (make capacity). Past
// HotThreshold followers, a follow turns the user hot (MakeUserHot): its
// new follows' GSI2 entries go to one of HotShards GSI2 partitions
// (FollowersShardPK) in turn, each counted on a shard counter in a
// partition of its own (UserShardPK), whose counts the projector copies
// onto the user's counter (lambda/hotkeys: Tallies), as for a hot post. A read of the
// user's counts reads its counter alone, and a page of its followers reads
// the GSI2 partitions together (lambda/hotkeys).

// MakeUserHot turns the user hot: one transaction that marks its counter
// (shards, an empty tally), puts each shard's counter (no counts, version
// 0) and the marker its followers' Query reads first (SKHotFollowers, in
// GSI2 under hotFollowerSK), conditioned on the user's counter existing
// and not being hot already (then it changes nothing, and the store learns
// the shards it has, whoever turned it hot). A user without a counter item
// (older than counters) is left as it is.
func (s *Store) MakeUserHot(ctx context.Context, userID string) error {
	const op = "store.MakeUserHot"
	if err := CheckIDs(op, userID); err != nil {
		return err
	}
	var c User
	found, err := s.GetConsistent(ctx, op, Key{UserPK(userID), SKCount}, &c)
	if err == nil && found && c.Shards > 0 { // turned hot by another store
		s.hotUsers.learn(userID, c.Shards)
	}
	if err != nil || !found || c.Shards > 0 {
		return err
	}
	shard := func(n int) shardCounterItem {
		return shardCounterItem{PK: UserShardPK(userID, n), SK: SKShard, UserID: userID, Shard: n}
	}
	marker := map[string]types.AttributeValue{AttrPK: str(UserPK(userID)), AttrSK: str(SKHotFollowers),
		AttrGSI2PK: str(FollowersPK(userID)), AttrGSI2SK: str(hotFollowerSK)}
	return s.turnHot(ctx, op, userID, s.hotUsers, UserPK(userID), func(a txAction) txAction { return a }, shard,
		[]map[string]types.AttributeValue{marker})
}

// followHot is Follow of a hot user: the follow (item), its GSI2 entry in
// the next shard, the follower's followingCount and that shard's followerCount,
// in one transaction; errExists (with existing set) when it follows
// already.
func (s *Store) followHot(ctx context.Context, op string, item followItem, shards int, existing *map[string]types.AttributeValue) error {
	f := item.Follow
	n := int(s.hotUsers.next.Add(1) % uint64(shards))
	item.GSI2PK = FollowersShardPK(f.FollowedID, n)
	av, err := marshal(op, item)
	if err != nil {
		return err
	}
	followerPK := UserPK(f.FollowerID)
	err = s.counting(ctx, op, func() error {
		return s.transact(ctx, op,
			s.put(av, func(old map[string]types.AttributeValue) error { *existing = old; return errExists }),
			s.addCount(followerPK, SKCount, "followingCount", countUp, onCounter(followerPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)),
			s.shardCount(UserShardPK(f.FollowedID, n), "followerCount", countUp, errs.E(op, errs.NotFound, "user not found")))
	})
	if err == nil {
		s.ownCount(ctx, UserShardPK(f.FollowedID, n))
	}
	return err
}

// followerShard returns the shard of a follow's GSI2 partition gsi2pk
// (-1: the followed user's own).
func followerShard(followedID, gsi2pk string) int {
	rest, ok := strings.CutPrefix(gsi2pk, FollowersPK(followedID)+"#")
	if !ok || len(rest) != 2 {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= HotShards {
		return -1
	}
	return n
}
