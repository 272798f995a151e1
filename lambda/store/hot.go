package store

import (
	"context"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// Hot posts. A post's likes land in its own partition, each a transaction
// that also adds to its counter there: 4 write units on one partition a
// like, 250 likes a second at DynamoDB's 1,000 units a partition (make
// capacity). Past HotThreshold likes and comments, a post turns hot
// (MakeHot): its new likes are written to one of HotShards shard
// partitions (ShardPK) in turn, each with a shard counter of its own in
// the same partition (SKShard), so that a like stays one transaction of 4
// units on a fiftieth of the load, checked on the shard counter rather
// than on the post. The projector copies each shard's counts, with the
// shard counter's version, onto the post's counter (lambda/hotkeys: Tallies): a read
// of the post's counts reads its counter alone, as for every post, and
// sees the shards' likes once the stream has been read. A post's likes are
// listed from its partition and its shards, merged newest first.

// HotShards is how many shard partitions a hot post's likes are spread
// over: 50 take 12,500 likes a second at 4 units each within 1,000 units a
// partition, and 2 units each on a shard counter item.
const HotShards = 50

// HotThreshold is the count of likes and comments at which a like turns a
// post hot, and the count of comments at which a comment does.
const HotThreshold = 1000

// CommentShards is how many of a hot post's shards take its new comments:
// a comment is a transaction of 4 units on its shard (the comment under
// 1 KB and the shard counter), so 8 shards take 2,000 comments a second,
// and a page of its comments reads 9 partitions (make capacity).
const CommentShards = 8

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

// errHot is the failure of a write on a post's own counter that found the
// post hot: the write goes to a shard instead.
type errHot struct{ shards int }

func (e *errHot) Error() string { return "the post is hot: " + strconv.Itoa(e.shards) + " shards" }

// notHot adds to a's condition (an action on a post's counter) that the post
// is not hot, and to its failure the error that it is.
func notHot(a txAction) txAction {
	a.cond = a.cond.And(expression.AttributeNotExists(expression.Name("shards")))
	failed := a.failed
	a.failed = func(old map[string]types.AttributeValue) error {
		if n, ok := old["shards"].(*types.AttributeValueMemberN); ok {
			shards, _ := strconv.Atoi(n.Value)
			return &errHot{shards: shards}
		}
		return failed(old)
	}
	return a
}

// MakeHot turns the published post hot: one transaction that marks its
// counter (shards, an empty tally), puts each shard's counter (no counts,
// the post's author and status, version 0) and the marker its likes' Query
// reads first, conditioned on the post being published, as read, and not
// hot already (then it changes nothing, and the store learns the shards it
// has, whoever turned it hot). A post without a counter item (older than
// counters) is left as it is.
func (s *Store) MakeHot(ctx context.Context, postID string) error {
	const op = "store.MakeHot"
	if err := CheckIDs(op, postID); err != nil {
		return err
	}
	var c Post
	found, err := s.GetConsistent(ctx, op, Key{PostPK(postID), SKCount}, &c)
	if err == nil && found && c.Shards > 0 { // turned hot by another store
		s.hot.learn(postID, c.Shards)
	}
	if err != nil || !found || c.Shards > 0 || !c.Published() {
		return err
	}
	guard := func(a txAction) txAction { return onlyIf(published(a), "authorId", c.AuthorID) } // published, as read
	shard := func(n int) shardCounterItem {
		return shardCounterItem{PK: ShardPK(postID, n), SK: SKShard, PostID: postID, Shard: n, AuthorID: c.AuthorID, Status: StatusPublished}
	}
	var markers []map[string]types.AttributeValue
	for _, sk := range []string{skHotMarker, skHotCommentsFirst, SKHotCommentsLast} {
		markers = append(markers, map[string]types.AttributeValue{AttrPK: str(PostPK(postID)), AttrSK: str(sk)})
	}
	return s.turnHot(ctx, op, postID, s.hot, PostPK(postID), guard, shard, markers)
}

// turnHot is MakeHot's and MakeUserHot's transaction: it marks the counter
// of the partition pk (shards, an empty tally) on the conditions that it
// exists, is not hot and what guard adds, puts the counter of each shard n
// (shard(n)) and each marker (with the count of shards), and learns the
// parent id hot in keys, with the shards it has when it was hot already.
// A counter that changed since it was read (guard failed) leaves it as it
// is.
func (s *Store) turnHot(ctx context.Context, op, id string, keys *hotKeys, pk string, guard func(txAction) txAction,
	shard func(n int) shardCounterItem, markers []map[string]types.AttributeValue) error {
	changed := errors.New("hot already, or changed")
	mark := expression.Set(expression.Name("shards"), expression.Value(HotShards)).
		Set(expression.Name("hot"), expression.Value(map[string]ShardTally{}))
	actions := []txAction{guard(notHot(txAction{key: Key{pk, SKCount}, update: &mark, cond: itemExists,
		failed: func(map[string]types.AttributeValue) error { return changed }}))}
	for n := range HotShards {
		item, err := marshal(op, shard(n))
		if err != nil {
			return err
		}
		actions = append(actions, always(s.put(item, nil)))
	}
	for _, m := range markers {
		m["shards"] = &types.AttributeValueMemberN{Value: strconv.Itoa(HotShards)}
		actions = append(actions, always(s.put(m, nil)))
	}
	err := s.transact(ctx, op, actions...)
	var hot *errHot
	switch {
	case errors.As(err, &hot):
		keys.learn(id, hot.shards)
		return nil
	case errors.Is(err, changed):
		return nil
	case err != nil:
		return err
	}
	keys.learn(id, HotShards)
	return nil
}

// likeHot is LikePost on a hot post: the guard (with the like's shard), the
// like in a shard at random, that shard's likeCount and version, and the
// liker's profile, in one transaction.
func (s *Store) likeHot(ctx context.Context, op string, l Like, shards int) error {
	l.Partition = ShardPK(l.PostID, int(s.hot.next.Add(1)%uint64(shards)))
	like, err := marshal(op, newLikeItem(l))
	if err != nil {
		return err
	}
	guard, err := marshal(op, newLikedItem(l))
	if err != nil {
		return err
	}
	userPK := UserPK(l.UserID)
	err = s.transact(ctx, op,
		s.put(guard, func(map[string]types.AttributeValue) error { return errExists }),
		s.put(like, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "like ID collision; retry")
		}),
		published(s.shardCount(l.Partition, "likeCount", countUp, errs.E(op, errs.NotFound, "post not found"))),
		s.exists(userPK, SKCount, onCounter(userPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	if err == nil {
		s.ownCount(ctx, l.Partition)
	}
	return err
}

// commentHot is CreateComment on a hot post: the comment in a shard, in
// turn (its ID changed to say which: inShard), that shard's commentCount
// and version, and the author's profile checked, in one transaction. It
// returns the comment as written.
func (s *Store) commentHot(ctx context.Context, op string, c Comment) (Comment, error) {
	c.ID = inShard(c.ID, int(s.hot.next.Add(1)%CommentShards))
	av, err := marshal(op, newCommentItem(c))
	if err != nil {
		return Comment{}, err
	}
	pk := ShardPK(c.PostID, commentShard(c.ID))
	av[AttrPK] = str(pk)
	authorPK := UserPK(c.AuthorID)
	err = s.transact(ctx, op,
		s.put(av, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "comment ID collision; retry")
		}),
		published(s.shardCount(pk, "commentCount", countUp, errs.E(op, errs.NotFound, "post not found"))),
		s.exists(authorPK, SKCount, onCounter(authorPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	if err != nil {
		return Comment{}, err
	}
	s.ownCount(ctx, pk)
	return c, nil
}

// errPastThreshold is the failure of a comment or follow on a counter that
// found HotThreshold comments or followers there: it turns hot first.
var errPastThreshold = errors.New("the threshold of hot is reached")

// belowThreshold adds to a's condition (an action on a counter) that its
// count counter is under HotThreshold, and to its failure errPastThreshold
// when it is not: with a Spread to read the shards (WithSpread), a parent
// turns hot at the threshold, and without one never does.
func (s *Store) belowThreshold(a txAction, counter string) txAction {
	if s.spread == nil {
		return a
	}
	a.cond = a.cond.And(expression.Or(expression.AttributeNotExists(expression.Name(counter)),
		expression.Name(counter).LessThan(expression.Value(HotThreshold))))
	failed := a.failed
	a.failed = func(old map[string]types.AttributeValue) error {
		if n, ok := old[counter].(*types.AttributeValueMemberN); ok {
			if count, _ := strconv.Atoi(n.Value); count >= HotThreshold {
				return errPastThreshold
			}
		}
		return failed(old)
	}
	return a
}

// hotKeys is what a store knows of which posts (or users) are hot, and
// their shards: a post stays hot until it is deleted, a user for good, so
// what it learns stays true.
type hotKeys struct {
	shards sync.Map     // ID -> int
	known  atomic.Int64 // how many
	// next picks the shard of a like: in turn from a random start, so that
	// each store spreads its likes evenly and stores start apart.
	next atomic.Uint64
}

func newHotKeys() *hotKeys {
	h := &hotKeys{}
	h.next.Store(rand.Uint64())
	return h
}

func (h *hotKeys) of(postID string) int {
	if n, ok := h.shards.Load(postID); ok {
		return n.(int)
	}
	return 0
}

func (h *hotKeys) learn(postID string, n int) {
	if n > 0 {
		if _, had := h.shards.Swap(postID, n); !had {
			h.known.Add(1)
		}
	}
}

// KnowsHot reports whether the store knows the post is hot (its likes and
// comments in shards); with "" whether it knows any post hot.
func (s *Store) KnowsHot(postID string) bool {
	if postID == "" {
		return s.hot.any()
	}
	return s.hot.of(postID) > 0
}

// any reports whether any is known hot.
func (h *hotKeys) any() bool { return h.known.Load() > 0 }
