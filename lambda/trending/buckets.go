package trending

// The buckets: what the aggregator counts, by their own time, into
// five-minute cells, written once a tumbling window per stream shard into
// buckets of five minutes for the hour, an hour for the day, a day for the
// week, each bucket in parts by post (bucketPK), one UpdateItem per part and
// 100 posts. A window's ranking is the sum of its buckets: one BatchGetItem
// of their parts, then one of its top posts, kept in each environment for
// KeepFor.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/kept"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Window is a span Ranking ranks over (the schema's TrendingWindow).
type Window string

const (
	Hour Window = "HOUR"
	Day  Window = "DAY"
	Week Window = "WEEK"
)

// Span is how a window is counted: its Buckets last buckets of Length (the
// current one included, so the window reaches between Buckets-1 and
// Buckets lengths back), each bucket kept in Parts parts.
type Span struct {
	Length         time.Duration
	Buckets, Parts int
}

// Spans are the windows' buckets. A part holds two attributes of about 35
// bytes for each post liked or commented in its bucket, so a part of 400 kB
// counts about 5,000 posts: a day bucket (16 parts) about 80,000, an hour's
// 20,000 (docs/trending.md).
var Spans = map[Window]Span{
	Hour: {Length: 5 * time.Minute, Buckets: 12, Parts: 4},
	Day:  {Length: time.Hour, Buckets: 24, Parts: 4},
	Week: {Length: 24 * time.Hour, Buckets: 7, Parts: 16},
}

// cellSpan is the span of the cells the aggregator counts in: the
// shortest bucket's, which every longer one is a multiple of.
const cellSpan = 5 * time.Minute

// MaxPosts is the most posts a ranking lists.
const MaxPosts = 50

// KeepFor is how long each execution environment keeps a window's ranking
// (the same for every caller) before it reads it again.
const KeepFor = 5 * time.Second

// Cell is where one like or comment counts: its post, and the start of the
// five-minute cell of its own creation time (CellOf).
type Cell struct {
	PostID string
	Start  time.Time
}

// CellOf returns the cell of a like or comment on postID made at t.
func CellOf(postID string, t time.Time) Cell {
	return Cell{PostID: postID, Start: t.UTC().Truncate(cellSpan)}
}

// Count is the likes and comments counted in a cell or a window.
type Count struct{ Likes, Comments int }

// Score is what a post ranks by: its likes plus its comments.
func (c Count) Score() int { return c.Likes + c.Comments }

// Buckets are the trending buckets of a table, through the core's store:
// its client and table, its clock, its batched reads and its posts.
type Buckets struct {
	s    *store.Store
	keep time.Duration
	mu   sync.Mutex
	kept map[Window]*kept.Value[[]Ranked]
}

// BucketsOption configures Buckets.
type BucketsOption func(*Buckets)

// WithKeep sets how long rankings are kept (KeepFor by default; 0 keeps
// none), for tests and the capacity model.
func WithKeep(d time.Duration) BucketsOption { return func(b *Buckets) { b.keep = d } }

// NewBuckets returns the buckets of s's table.
func NewBuckets(s *store.Store, opts ...BucketsOption) *Buckets {
	b := &Buckets{s: s, keep: KeepFor, kept: map[Window]*kept.Value[[]Ranked]{}}
	for _, o := range opts {
		o(b)
	}
	return b
}

// bucket is one part of one bucket.
type bucket struct {
	length time.Duration
	start  time.Time
	part   int
}

func (b bucket) key() store.Key {
	return store.Key{PK: bucketPK(b.length, b.start, b.part), SK: trendSK}
}

// Apply adds counts, what one stream shard's records counted in one flush,
// to every bucket they fall in. mark orders the shard's flushes (the padded
// sequence number of the flush's first record): each UpdateItem writes the
// part's mark for the shard and applies only if the part's mark is older,
// so a flush applied again adds nothing twice. Counts are split
// deterministically (by bucket, part and sorted post), so the same counts
// make the same writes: the parts in parallel, each part's chunks in order.
func (b *Buckets) Apply(ctx context.Context, shardID, mark string, counts map[Cell]Count) error {
	const op = "trending.Apply"
	byBucket := map[bucket]map[string]Count{}
	for cell, c := range counts {
		if c == (Count{}) || !store.ValidID(cell.PostID) {
			continue
		}
		for _, w := range Spans {
			k := bucket{w.Length, cell.Start.Truncate(w.Length), partOf(cell.PostID, w.Parts)}
			if byBucket[k] == nil {
				byBucket[k] = map[string]Count{}
			}
			sum := byBucket[k][cell.PostID]
			byBucket[k][cell.PostID] = Count{sum.Likes + c.Likes, sum.Comments + c.Comments}
		}
	}
	var writes []func(context.Context) error
	for k, posts := range byBucket {
		ids := slices.Sorted(maps.Keys(posts))
		writes = append(writes, func(ctx context.Context) error { // a part's chunks one after the other
			for chunk := 0; chunk*maxPostsWritten < len(ids); chunk++ {
				part := ids[chunk*maxPostsWritten : min((chunk+1)*maxPostsWritten, len(ids))]
				if err := b.add(ctx, op, k, shardID, fmt.Sprintf("%s.%04d", mark, chunk), part, posts); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return inParallel(ctx, writes)
}

// maxPostsWritten is the posts of one UpdateItem of a bucket's part: two
// ADDs each, within an update expression's 4 kB.
const maxPostsWritten = 100

// add adds the posts' counts to the bucket's part, unless the part holds
// the shard's mark already or a later one.
func (b *Buckets) add(ctx context.Context, op string, k bucket, shardID, mark string, ids []string, counts map[string]Count) error {
	markName := expression.Name(markAttr(shardID))
	expires := k.start.Add(k.length * time.Duration(Spans[Week].Buckets+1)).Unix()
	upd := expression.Set(markName, expression.Value(mark)).Set(expression.Name("ttl"), expression.Value(expires))
	for _, id := range ids {
		if c := counts[id]; c.Likes != 0 {
			upd = upd.Add(expression.Name(likesAttr(id)), expression.Value(c.Likes))
		}
		if c := counts[id]; c.Comments != 0 {
			upd = upd.Add(expression.Name(commentsAttr(id)), expression.Value(c.Comments))
		}
	}
	cond := expression.Or(expression.AttributeNotExists(markName), markName.LessThan(expression.Value(mark)))
	err := b.update(ctx, op, k.key(), upd, cond)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // applied before
	}
	return err
}

// update is one conditional UpdateItem of the item key; a condition that
// fails is returned as the SDK's ConditionalCheckFailedException.
func (b *Buckets) update(ctx context.Context, op string, key store.Key, upd expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	builder := expression.NewBuilder().WithUpdate(upd)
	if cond.IsSet() {
		builder = builder.WithCondition(cond)
	}
	expr, err := builder.Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = b.s.API().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(b.s.Table()), Key: key.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return store.Fail(op, err)
	}
	return err
}

// maxConcurrentWrites bounds the part writes of a flush in flight at once.
const maxConcurrentWrites = 8

// inParallel runs the calls, up to maxConcurrentWrites at a time, and
// returns the first error.
func inParallel(ctx context.Context, calls []func(context.Context) error) error {
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
		sem      = make(chan struct{}, maxConcurrentWrites)
	)
	for _, call := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := call(ctx); err != nil {
				mu.Lock()
				firstErr = cmp.Or(firstErr, err)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return firstErr
}

// sumParts sums the likes and comments of bucket parts' items by post.
func sumParts(op string, items map[store.Key]map[string]types.AttributeValue) (map[string]Count, error) {
	sums := map[string]Count{}
	for _, item := range items {
		for name, v := range item {
			kind, id, ok := strings.Cut(name, "_")
			n, isNumber := v.(*types.AttributeValueMemberN)
			if !ok || !isNumber || kind != "l" && kind != "c" {
				continue
			}
			count, err := strconv.Atoi(n.Value)
			if err != nil {
				return nil, errs.Wrap(op, errs.Internal, "internal error", err)
			}
			sum := sums[id]
			if kind == "l" {
				sum.Likes += count
			} else {
				sum.Comments += count
			}
			sums[id] = sum
		}
	}
	return sums, nil
}
