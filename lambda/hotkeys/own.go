package hotkeys

// A writer's own counts. A hot post's or user's counts are its counter's,
// onto which the projector copies each shard's tally (Tallies) once it
// has read the stream: a read in the execution environment that has just
// liked, commented or followed there would miss its own write for that
// long, and keep the miss for a hot page's TTL (lambda/hotpage). So a write
// on a shard reads the shard's counter back (Wrote: one strongly consistent
// GetItem, a read unit on the shard's partition) and the store keeps its
// tally (Tallies); every read
// of the parent's counter in this store then counts that tally in place of
// the one the projector copied while it is newer (its version), so that
// the writer's environment answers its own writes at once, and never a
// count older than one it has answered. Other environments see them when
// the projector has copied them, within a hot page's TTL of their own reads.

import (
	"context"
	"maps"
	"sync"
	"sync/atomic"

	"github.com/example/appsync-dynamo/lambda/store"
)

// maxOwnParents bounds the parents a store keeps its own tallies of; past
// it, it forgets them all (a read then counts what the projector copied).
const maxOwnParents = 4096

// ownTallies are the shard tallies a store read after its own writes, by
// the parent's partition ("POST#<id>", "USER#<id>") and shard name.
type ownTallies struct {
	mu    sync.Mutex
	by    map[string]map[string]store.ShardTally
	known atomic.Int64 // len(by), read without mu
}

func newOwnTallies() *ownTallies { return &ownTallies{by: map[string]map[string]store.ShardTally{}} }

// learn keeps t as shard's tally of parent, unless it knows a newer one.
func (o *ownTallies) learn(parent, shard string, t store.ShardTally) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.by[parent] == nil {
		if len(o.by) >= maxOwnParents {
			clear(o.by)
		}
		o.by[parent] = map[string]store.ShardTally{}
	}
	if old, ok := o.by[parent][shard]; !ok || old.Version < t.Version {
		o.by[parent][shard] = t
	}
	o.known.Store(int64(len(o.by)))
}

// onto returns hot, a counter's shard tallies as read from parent's counter
// item, with each of its own tallies that is newer in place (a new map when
// one is; hot itself is never changed), and forgets those the counter has
// caught up with. A counter read without its tallies (nil: its counts were
// not read) is returned as it is.
func (o *ownTallies) onto(parent string, hot map[string]store.ShardTally) map[string]store.ShardTally {
	if hot == nil || o.known.Load() == 0 {
		return hot
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	own, out, cloned := o.by[parent], hot, false
	for shard, t := range own {
		if read, ok := hot[shard]; ok && read.Version >= t.Version {
			delete(own, shard) // copied: the counter counts it
			continue
		}
		if !cloned {
			out, cloned = maps.Clone(hot), true
		}
		out[shard] = t
	}
	if own != nil && len(own) == 0 {
		delete(o.by, parent)
		o.known.Store(int64(len(o.by)))
	}
	return out
}

// Wrote reads back the counter of the shard at place (ShardPK,
// UserShardPK) after this store's write on it, and keeps its tally for its
// parent's reads. A failed read keeps nothing: the write stands, and the
// parent's count is the projector's until it has copied the write.
func (l *Layer) Wrote(ctx context.Context, place store.Place) {
	parent, ok := shardParent(place.Counter)
	if !ok {
		return
	}
	var c shardCounter
	if found, err := l.s.GetConsistent(ctx, "hotkeys.Wrote", store.Key{PK: place.Counter, SK: store.SKShard}, &c); err != nil || !found {
		return
	}
	l.own.learn(parent, shardName(c.Shard), store.ShardTally{Likes: c.LikeCount, Comments: c.CommentCount, Followers: c.FollowerCount, Version: c.Version})
}

// Tallies are the shard tallies of the counter of partition pk as read,
// with each of this store's own that is newer in place.
func (l *Layer) Tallies(pk string, hot map[string]store.ShardTally) map[string]store.ShardTally {
	return l.own.onto(pk, hot)
}
