package store

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/kept"
)

// A hot parent's counts: each shard counts its own items (its counter's
// likes, comments or followers, with a version), and the projector copies
// them, with the version read, onto the parent's counter (lambda/hotkeys: Tallies), so
// that a read of the parent's counts reads its counter alone. A store reads
// a hot post's counter at most once a second (hotCounter).

// ShardTally is a shard's counts as the projector copies them onto the
// post's counter, with the shard counter's version they were read at.
type ShardTally struct {
	Likes     int   `dynamodbav:"l"`
	Comments  int   `dynamodbav:"c"`
	Followers int   `dynamodbav:"f,omitempty"` // a hot user's
	Version   int64 `dynamodbav:"v"`
}

// shardCounterItem is a hot post's shard counter.
// A hot user's has its ID and followerCount instead of the post's fields.
type shardCounterItem struct {
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

// shardCount adds delta to a count of the shard counter of partition pk,
// and 1 to its version; missing is the error of an absent shard counter
// (the post deleted).
func (s *Store) shardCount(pk, counter string, delta int, missing error) txAction {
	add := expression.Add(expression.Name(counter), expression.Value(delta)).Add(expression.Name("version"), expression.Value(1))
	return txAction{key: Key{pk, SKShard}, update: &add, cond: itemExists, failed: func(map[string]types.AttributeValue) error { return missing }}
}

// hotCountsAge is how long a store answers a hot post's counts from what it
// read of them before reading them again: a hot post's counts change many
// times a second, and every like's answer reading them would put a read
// unit a like on the post's partition.
const hotCountsAge = time.Second

// hotCounts are hot posts' counter items as a store read them, each kept
// hotCountsAge, the readers that miss one meanwhile waiting for one read
// (kept.Through).
type hotCounts struct {
	mu sync.Mutex
	by map[string]*kept.Value[counterRead] // post ID -> its counter item
}

// counterRead is a counter item read, found or not.
type counterRead struct {
	counter Post
	found   bool
}

// maxHotCounts bounds the posts whose counter items a store keeps; past
// it, it forgets them all.
const maxHotCounts = 4096

// hotCounter returns a hot post's counts, from its counter read eventually
// consistent at most once per hotCountsAge (so a like's answer counts what
// the projector has copied, up to a second before), with the tallies this
// store read after its own writes (own.go) where newer.
func (s *Store) hotCounter(ctx context.Context, op, postID string) (Post, bool, error) {
	c, found, err := s.hotCounterItem(ctx, op, postID)
	if err != nil || !found {
		return Post{}, found, err
	}
	c.Hot = s.own.onto(PostPK(postID), c.Hot)
	p := Post{ID: postID, AuthorID: c.AuthorID, Status: c.Status}
	p.add(c)
	return p, true, nil
}

func (s *Store) hotCounterItem(ctx context.Context, op, postID string) (Post, bool, error) {
	h := s.hotCounts
	r, err := kept.Through(ctx, &h.mu, s.now, hotCountsAge,
		func() *kept.Value[counterRead] { return h.by[postID] },
		func(v *kept.Value[counterRead]) {
			if v == nil {
				delete(h.by, postID)
				return
			}
			if len(h.by) >= maxHotCounts {
				clear(h.by)
			}
			h.by[postID] = v
		},
		func(ctx context.Context) (counterRead, error) {
			out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: Key{PostPK(postID), SKCount}.Attributes()})
			if err != nil {
				return counterRead{}, Fail(op, err)
			}
			var r counterRead
			if r.found = out.Item != nil; r.found {
				err = unmarshal(op, out.Item, &r.counter)
			}
			return r, err
		})
	if errors.Is(err, kept.ErrWaitCut) {
		err = Fail(op, err)
	}
	return r.counter, r.found, err
}

// CountedAttrs adds to attrs, a projection, the attributes a hot post's or
// user's counter holds its shards' counts in, when attrs reads counts.
func CountedAttrs(attrs []string) []string {
	if attrs == nil || !SelectsCount(attrs, PostCounts) && !SelectsCount(attrs, UserCounts) {
		return attrs
	}
	return append(slices.Clone(attrs), "shards", "hot")
}
