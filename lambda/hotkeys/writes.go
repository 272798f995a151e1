package hotkeys

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Hot posts. A post's likes land in its own partition, each a transaction
// that also adds to its counter there: 4 write units on one partition a
// like, 250 likes a second at DynamoDB's 1,000 units a partition (make
// capacity). Past HotThreshold likes and comments, a post turns hot
// (MakeHot): its new likes are written to one of HotShards shard
// partitions (ShardPK) in turn, each with a shard counter of its own in
// the same partition (store.SKShard), so that a like stays one transaction
// of 4 units on a fiftieth of the load, checked on the shard counter
// rather than on the post. The projector copies each shard's counts, with
// the shard counter's version, onto the post's counter (Tallies): a read
// of the post's counts reads its counter alone, as for every post, and
// sees the shards' likes once the stream has been read. A post's likes are
// listed from its partition and its shards, merged newest first (pages.go).
//
// Hot users. A follow's GSI2 entry lands in the followed user's one GSI2
// partition (FOLLOWERS#<id>), and the follow adds to the user's counter
// (and its copy in GSI1 under HANDLE#<handle>): 2 units on each of three
// partitions a follow, 500 follows a second (make capacity). Past
// HotThreshold followers, a follow turns the user hot (MakeUserHot): its
// new follows' GSI2 entries go to one of HotShards GSI2 partitions
// (FollowersShardPK) in turn, each counted on a shard counter in a
// partition of its own (UserShardPK), whose counts the projector copies
// onto the user's counter, as for a hot post.
//
// The store writes each child where Add places it (a store.Place), with
// its count on the counter there; this file decides where.

// HotShards is how many shard partitions a hot post's likes are spread
// over: 50 take 12,500 likes a second at 4 units each within 1,000 units a
// partition, and 2 units each on a shard counter item.
const HotShards = 50

// HotThreshold is the count of likes and comments at which a like turns a
// post hot, and the count of comments (followers) at which a comment (a
// follow) does.
const HotThreshold = 1000

// CommentShards is how many of a hot post's shards take its new comments:
// a comment is a transaction of 4 units on its shard (the comment under
// 1 KB and the shard counter), so 8 shards take 2,000 comments a second,
// and a page of its comments reads 9 partitions (make capacity).
const CommentShards = 8

// thresholdOf is the count on a parent's counter that turns it hot when a
// child of kind is added (none for likes: Grew turns a post hot after).
var thresholdOf = map[string]string{store.KindComments: "commentCount", store.KindFollowers: "followerCount"}

// errHot is the failure of a write on a parent's own counter that found the
// parent hot: the write goes to a shard instead.
type errHot struct{ shards int }

func (e *errHot) Error() string { return "the parent is hot: " + strconv.Itoa(e.shards) + " shards" }

// errPastThreshold is the failure of a comment or follow on a counter that
// found HotThreshold comments or followers there: it turns hot first.
var errPastThreshold = errors.New("the threshold of hot is reached")

// Guard is the condition on a parent's counter of a child written in its
// own partition: that the parent is not hot (errHot otherwise), and, for a
// comment or a follow, that its count is under HotThreshold
// (errPastThreshold otherwise).
func (l *Layer) Guard(kind string, failed func(old store.Item) error) (expression.ConditionBuilder, func(old store.Item) error) {
	cond := expression.AttributeNotExists(expression.Name("shards"))
	counter := thresholdOf[kind]
	if counter != "" {
		cond = cond.And(expression.Or(expression.AttributeNotExists(expression.Name(counter)),
			expression.Name(counter).LessThan(expression.Value(HotThreshold))))
	}
	return cond, func(old store.Item) error {
		if n, ok := old["shards"].(*types.AttributeValueMemberN); ok {
			shards, _ := strconv.Atoi(n.Value)
			return &errHot{shards: shards}
		}
		if n, ok := old[counter].(*types.AttributeValueMemberN); ok && counter != "" {
			if count, _ := strconv.Atoi(n.Value); count >= HotThreshold {
				return errPastThreshold
			}
		}
		return failed(old)
	}
}

// Add writes a new child of a parent: in one of its shards, in turn, when
// the store knows it hot; otherwise in its own partition under Guard, and,
// refused there, in a shard of the parent turned hot meanwhile, or that it
// turns hot now (MakeHot, MakeUserHot). A write in a shard reads its
// counter back (Wrote).
func (l *Layer) Add(ctx context.Context, kind, parent, id string, missing error, write func(context.Context, store.Place) error) error {
	k := l.known(kind)
	if n := k.of(parent); n > 0 {
		return l.addAt(ctx, kind, parent, id, n, write)
	}
	err := write(ctx, store.Place{})
	var hot *errHot
	switch {
	case errors.Is(err, errPastThreshold):
		if err := l.turnHot(ctx, kind, parent); err != nil {
			return err
		}
		n := k.of(parent)
		if n == 0 { // left as it is: not published, or its counter gone
			return missing
		}
		return l.addAt(ctx, kind, parent, id, n, write)
	case errors.As(err, &hot): // turned hot since this store last knew
		k.learn(parent, hot.shards)
		return l.addAt(ctx, kind, parent, id, hot.shards, write)
	}
	return err
}

// addAt writes the child in the next of the parent's shards.
func (l *Layer) addAt(ctx context.Context, kind, parent, id string, shards int, write func(context.Context, store.Place) error) error {
	next := l.known(kind).next.Add(1)
	n := int(next % uint64(shards))
	var place store.Place
	switch kind {
	case store.KindLikes:
		place = store.Place{Partition: ShardPK(parent, n), Counter: ShardPK(parent, n)}
	case store.KindComments: // its ID says which shard (DeleteComment finds it by it)
		id = inShard(id, int(next%CommentShards))
		pk := ShardPK(parent, commentShard(id))
		place = store.Place{Partition: pk, Counter: pk, ID: id}
	case store.KindFollowers:
		place = store.Place{Partition: FollowersShardPK(parent, n), Counter: UserShardPK(parent, n)}
	}
	err := write(ctx, place)
	if err == nil {
		l.Wrote(ctx, place)
	}
	return err
}

// Locate is the shard of an existing child of a hot parent: a comment's by
// its ID, a like's and a follow's by the partition its item names (the
// zero Place for the parent's own).
func (l *Layer) Locate(kind, parent, id, partition string) store.Place {
	switch kind {
	case store.KindComments:
		pk := ShardPK(parent, commentShard(id))
		return store.Place{Partition: pk, Counter: pk}
	case store.KindLikes:
		if partition != "" {
			return store.Place{Partition: partition, Counter: partition}
		}
	case store.KindFollowers:
		if n := followerShard(parent, partition); n >= 0 {
			return store.Place{Partition: partition, Counter: UserShardPK(parent, n)}
		}
	}
	return store.Place{}
}

// Grew turns a post hot once a like finds HotThreshold likes and comments
// on it. A failure leaves the post as it was, its like counted; the next
// like tries again.
func (l *Layer) Grew(ctx context.Context, kind, parent string, count int) {
	if kind == store.KindLikes && l.posts.of(parent) == 0 && count >= HotThreshold {
		_ = l.MakeHot(ctx, parent)
	}
}

// turnHot turns the parent of a child of kind hot.
func (l *Layer) turnHot(ctx context.Context, kind, parent string) error {
	if kind == store.KindFollowers {
		return l.MakeUserHot(ctx, parent)
	}
	return l.MakeHot(ctx, parent)
}

// commentShard is the shard of a hot post's comment id: its last
// character's byte modulo CommentShards, which inShard chose, so that
// DeleteComment finds it from the ID alone.
func commentShard(id string) int { return int(id[len(id)-1]) % CommentShards }

// inShard returns id, a ULID, with its last character (random) changed, if
// need be, to the next of ULID's alphabet whose shard is n: the ID stays a
// ULID of the same time, sorting where it did within its millisecond.
func inShard(id string, n int) string {
	const alphabet = ulid.Encoding
	last := id[len(id)-1]
	from := max(strings.IndexByte(alphabet, last), 0)
	for i := range len(alphabet) {
		if c := alphabet[(from+i)%len(alphabet)]; int(c)%CommentShards == n {
			return id[:len(id)-1] + string(c)
		}
	}
	return id // unreachable: every shard has characters in the alphabet
}

// followerShard returns the shard of a follow's GSI2 partition gsi2pk
// (-1: the followed user's own).
func followerShard(followedID, gsi2pk string) int {
	rest, ok := strings.CutPrefix(gsi2pk, store.FollowersPK(followedID)+"#")
	if !ok || len(rest) != 2 {
		return -1
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n >= HotShards {
		return -1
	}
	return n
}

// MakeHot turns the published post hot: one transaction that marks its
// counter (shards, an empty tally), puts each shard's counter (no counts,
// the post's author and status, version 0) and the marker its likes' Query
// reads first, conditioned on the post being published, as read, and not
// hot already (then it changes nothing, and the store learns the shards it
// has, whoever turned it hot). A post without a counter item (older than
// counters) is left as it is.
func (l *Layer) MakeHot(ctx context.Context, postID string) error {
	const op = "store.MakeHot"
	if err := store.CheckIDs(op, postID); err != nil {
		return err
	}
	var c store.Post
	found, err := l.s.GetConsistent(ctx, op, store.Key{PK: store.PostPK(postID), SK: store.SKCount}, &c)
	if err == nil && found && c.Shards > 0 { // turned hot by another store
		l.posts.learn(postID, c.Shards)
	}
	if err != nil || !found || c.Shards > 0 || !c.Published() {
		return err
	}
	asRead := expression.Or(expression.AttributeNotExists(expression.Name("status")), // published, as read
		expression.Name("status").Equal(expression.Value(store.StatusPublished))).
		And(expression.Name("authorId").Equal(expression.Value(c.AuthorID)))
	shard := func(n int) shardCounter {
		return shardCounter{PK: ShardPK(postID, n), SK: store.SKShard, PostID: postID, Shard: n, AuthorID: c.AuthorID, Status: store.StatusPublished}
	}
	var markers []store.Item
	for _, sk := range []string{likesMarker, commentsFirst, commentsLast} {
		markers = append(markers, store.Item{store.AttrPK: str(store.PostPK(postID)), store.AttrSK: str(sk)})
	}
	return l.turn(ctx, op, postID, l.posts, store.PostPK(postID), asRead, shard, markers)
}

// MakeUserHot turns the user hot: one transaction that marks its counter
// (shards, an empty tally), puts each shard's counter (no counts, version
// 0) and the marker its followers' Query reads first (followersMarker, in
// GSI2 under followersMarkerSK), conditioned on the user's counter
// existing and not being hot already (then it changes nothing, and the
// store learns the shards it has, whoever turned it hot). A user without a
// counter item (older than counters) is left as it is.
func (l *Layer) MakeUserHot(ctx context.Context, userID string) error {
	const op = "store.MakeUserHot"
	if err := store.CheckIDs(op, userID); err != nil {
		return err
	}
	var c store.User
	found, err := l.s.GetConsistent(ctx, op, store.Key{PK: store.UserPK(userID), SK: store.SKCount}, &c)
	if err == nil && found && c.Shards > 0 { // turned hot by another store
		l.users.learn(userID, c.Shards)
	}
	if err != nil || !found || c.Shards > 0 {
		return err
	}
	shard := func(n int) shardCounter {
		return shardCounter{PK: UserShardPK(userID, n), SK: store.SKShard, UserID: userID, Shard: n}
	}
	marker := store.Item{store.AttrPK: str(store.UserPK(userID)), store.AttrSK: str(followersMarker),
		store.AttrGSI2PK: str(store.FollowersPK(userID)), store.AttrGSI2SK: str(followersMarkerSK)}
	return l.turn(ctx, op, userID, l.users, store.UserPK(userID), expression.ConditionBuilder{}, shard, []store.Item{marker})
}

// turn is MakeHot's and MakeUserHot's transaction: it marks the counter of
// the partition pk (shards, an empty tally) on the conditions that it
// exists, is not hot and asRead (when set), puts the counter of each shard
// n (shard(n)) and each marker (with the count of shards), and learns the
// parent id hot in k, with the shards it has when it was hot already. A
// counter that changed since it was read (asRead failed) leaves it as it
// is.
func (l *Layer) turn(ctx context.Context, op, id string, k *known, pk string, asRead expression.ConditionBuilder,
	shard func(n int) shardCounter, markers []store.Item) error {
	changed := errors.New("hot already, or changed")
	mark := expression.Set(expression.Name("shards"), expression.Value(HotShards)).
		Set(expression.Name("hot"), expression.Value(map[string]store.ShardTally{}))
	cond := expression.AttributeExists(expression.Name(store.AttrPK)).And(expression.AttributeNotExists(expression.Name("shards")))
	if asRead.IsSet() {
		cond = cond.And(asRead)
	}
	actions := []store.Action{store.Update(store.Key{PK: pk, SK: store.SKCount}, mark, cond, func(old store.Item) error {
		if n, ok := old["shards"].(*types.AttributeValueMemberN); ok {
			shards, _ := strconv.Atoi(n.Value)
			return &errHot{shards: shards}
		}
		return changed
	})}
	for n := range HotShards {
		item, err := marshal(shard(n))
		if err != nil {
			return errs.Wrap(op, errs.Internal, "internal error", err)
		}
		actions = append(actions, store.Put(item))
	}
	for _, m := range markers {
		m["shards"] = &types.AttributeValueMemberN{Value: strconv.Itoa(HotShards)}
		actions = append(actions, store.Put(m))
	}
	err := l.s.Transact(ctx, op, actions...)
	var hot *errHot
	switch {
	case errors.As(err, &hot):
		k.learn(id, hot.shards)
		return nil
	case errors.Is(err, changed):
		return nil
	case err != nil:
		return err
	}
	k.learn(id, HotShards)
	return nil
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
