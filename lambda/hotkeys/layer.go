package hotkeys

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/kept"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Layer is a store's hot keys: its Spread (store.WithSpread). It knows
// which posts and users are hot, and their shards, from what the store has
// read and written (a parent stays hot: what it learns stays true); the
// tallies the store read back after its own writes on shards (own.go); and
// hot posts' counters, kept a second (Counter). It is safe for concurrent
// use.
type Layer struct {
	s        *store.Store
	posts    *known // which posts this store knows are hot
	users    *known // which users
	counters *keptCounters
	own      *ownTallies
}

// Spread is the option that gives a store its hot keys: with it, a store
// turns a parent hot at HotThreshold, and writes and reads its children in
// its shards too (store.New(api, table, tokens, hotkeys.Spread)).
var Spread = withLayer(func(*Layer) {})

// SpreadFrom is Spread with each store's writes spread over shards in turn
// from shard n, rather than from a random one (the capacity model uses it,
// for figures that do not change between runs).
func SpreadFrom(n uint64) store.Option {
	return withLayer(func(l *Layer) { l.posts.next.Store(n); l.users.next.Store(n) })
}

func withLayer(set func(*Layer)) store.Option {
	return store.WithSpread(func(s *store.Store) store.Spread {
		l := &Layer{s: s, posts: newKnown(), users: newKnown(), counters: &keptCounters{by: map[string]*kept.Value[counterRead]{}}, own: newOwnTallies()}
		set(l)
		return l
	})
}

// Of is the hot keys of s (nil without: see Spread).
func Of(s *store.Store) *Layer {
	l, _ := s.Spread().(*Layer)
	return l
}

var _ store.Spread = (*Layer)(nil)

// KnowsHot reports whether the store knows the post is hot (its likes and
// comments in shards); with "" whether it knows any post hot. A store
// without hot keys (l nil) knows none.
func (l *Layer) KnowsHot(postID string) bool {
	if l == nil {
		return false
	}
	if postID == "" {
		return l.posts.any()
	}
	return l.posts.of(postID) > 0
}

// known is what a store knows of which posts (or users) are hot, and
// their shards: a post stays hot until it is deleted, a user for good, so
// what it learns stays true.
type known struct {
	shards sync.Map     // ID -> int
	count  atomic.Int64 // how many
	// next picks the shard of a write: in turn from a random start, so
	// that each store spreads its writes evenly and stores start apart.
	next atomic.Uint64
}

func newKnown() *known {
	k := &known{}
	k.next.Store(rand.Uint64())
	return k
}

func (k *known) of(id string) int {
	if n, ok := k.shards.Load(id); ok {
		return n.(int)
	}
	return 0
}

func (k *known) learn(id string, n int) {
	if n > 0 {
		if _, had := k.shards.Swap(id, n); !had {
			k.count.Add(1)
		}
	}
}

// any reports whether any is known hot.
func (k *known) any() bool { return k.count.Load() > 0 }

// known is what the store knows of the parents of kind (a kind of
// children, or a partition's prefix).
func (l *Layer) known(kind string) *known {
	if kind == store.KindFollowers || strings.HasPrefix(kind, store.UserPK("")) {
		return l.users
	}
	return l.posts
}

// parent is the ID of the post or user of partition pk, and what the store
// knows of such parents.
func (l *Layer) parent(pk string) (string, *known) {
	if id, ok := strings.CutPrefix(pk, store.UserPK("")); ok {
		return id, l.users
	}
	return strings.TrimPrefix(pk, store.PostPK("")), l.posts
}

// Learn records what a parent's counter says: hot, with shards.
func (l *Layer) Learn(pk string, shards int) {
	id, k := l.parent(pk)
	k.learn(id, shards)
}

// Parts are the shards of the parent of partition pk, shards of them: for
// a post (the partitions of its likes, comments and shard counters), as
// many as its counter said, or, with -1 (its counter gone), as its likes'
// marker says (none without one). A user's are never deleted.
func (l *Layer) Parts(ctx context.Context, pk string, shards int) ([]string, error) {
	postID, ok := strings.CutPrefix(pk, store.PostPK(""))
	if !ok {
		return nil, nil
	}
	if shards < 0 {
		var marker struct {
			Shards int `dynamodbav:"shards"`
		}
		if _, err := l.s.GetConsistent(ctx, "store.DeletePost", store.Key{PK: pk, SK: likesMarker}, &marker); err != nil {
			return nil, err
		}
		shards = marker.Shards
	}
	parts := make([]string, shards)
	for n := range parts {
		parts[n] = ShardPK(postID, n)
	}
	return parts, nil
}

// countersAge is how long a store answers a hot post's counts from what it
// read of them before reading them again: a hot post's counts change many
// times a second, and every like's answer reading them would put a read
// unit a like on the post's partition.
const countersAge = time.Second

// keptCounters are hot posts' counter items as a store read them, each kept
// countersAge, the readers that miss one meanwhile waiting for one read
// (kept.Through).
type keptCounters struct {
	mu sync.Mutex
	by map[string]*kept.Value[counterRead] // partition -> its counter item
}

// counterRead is a counter item read, found or not.
type counterRead struct {
	counter store.Item
	found   bool
}

// maxKeptCounters bounds the posts whose counter items a store keeps; past
// it, it forgets them all.
const maxKeptCounters = 4096

// Counter returns a hot post's counter item, read eventually consistent at
// most once per countersAge (so a like's answer counts what the projector
// has copied, up to a second before); kept is false for a parent not known
// hot (the store reads its counter itself).
func (l *Layer) Counter(ctx context.Context, op, pk string) (store.Item, bool, bool, error) {
	id, k := l.parent(pk)
	if k != l.posts || l.posts.of(id) == 0 {
		return nil, false, false, nil
	}
	c := l.counters
	r, err := kept.Through(ctx, &c.mu, l.s.Now, countersAge,
		func() *kept.Value[counterRead] { return c.by[pk] },
		func(v *kept.Value[counterRead]) {
			if v == nil {
				delete(c.by, pk)
				return
			}
			if len(c.by) >= maxKeptCounters {
				clear(c.by)
			}
			c.by[pk] = v
		},
		func(ctx context.Context) (counterRead, error) {
			out, err := l.s.API().GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(l.s.Table()), Key: store.Key{PK: pk, SK: store.SKCount}.Attributes()})
			if err != nil {
				return counterRead{}, store.Fail(op, err)
			}
			return counterRead{counter: out.Item, found: out.Item != nil}, nil
		})
	if errors.Is(err, kept.ErrWaitCut) {
		err = store.Fail(op, err)
	}
	return r.counter, r.found, true, err
}

// shardCounter is a hot post's shard counter. A hot user's has its ID and
// followerCount instead of the post's fields.
type shardCounter struct {
	PK            string `dynamodbav:"pk"`
	SK            string `dynamodbav:"sk"`
	PostID        string `dynamodbav:"postId,omitempty"`
	UserID        string `dynamodbav:"userId,omitempty"`
	Shard         int    `dynamodbav:"shard"`
	AuthorID      string `dynamodbav:"authorId,omitempty"`
	Status        string `dynamodbav:"status,omitempty"`
	LikeCount     int    `dynamodbav:"likeCount"`
	CommentCount  int    `dynamodbav:"commentCount"`
	FollowerCount int    `dynamodbav:"followerCount,omitempty"`
	Version       int64  `dynamodbav:"version"`
}

func marshal(v any) (store.Item, error) { return attributevalue.MarshalMap(v) }
