package store

// Trending: the posts most liked and commented in the last hour, day and
// week. The aggregator (package trending) counts the likes and comments of
// the table's stream by their own time into five-minute cells, and writes
// them, once a tumbling window per stream shard, into buckets: five minutes
// for the hour, an hour for the day, a day for the week, each bucket in
// parts by post (TrendPK), one UpdateItem per part and 100 posts. A window's
// ranking is the sum of its buckets: one BatchGetItem of their parts, then
// one of its top posts, kept in each environment for HotPageTTL.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// TrendWindow is a span Trending ranks over (the schema's TrendingWindow).
type TrendWindow string

const (
	TrendHour TrendWindow = "HOUR"
	TrendDay  TrendWindow = "DAY"
	TrendWeek TrendWindow = "WEEK"
)

// TrendSpan is how a window is counted: its Buckets last buckets of Span
// (the current one included, so the window reaches between Buckets-1 and
// Buckets spans back), each bucket kept in Parts parts.
type TrendSpan struct {
	Span           time.Duration
	Buckets, Parts int
}

// TrendSpans are the windows' buckets. A part holds two attributes of
// about 35 bytes for each post liked or commented in its bucket, so a part
// of 400 kB counts about 5,000 posts: a day bucket (16 parts) about
// 80,000, an hour's 20,000 (docs/trending.md).
var TrendSpans = map[TrendWindow]TrendSpan{
	TrendHour: {Span: 5 * time.Minute, Buckets: 12, Parts: 4},
	TrendDay:  {Span: time.Hour, Buckets: 24, Parts: 4},
	TrendWeek: {Span: 24 * time.Hour, Buckets: 7, Parts: 16},
}

// TrendCellSpan is the span of the cells the aggregator counts in: the
// shortest bucket's, which every longer one is a multiple of.
const TrendCellSpan = 5 * time.Minute

// MaxTrending is the most posts Trending lists.
const MaxTrending = 50

// TrendCell is where one like or comment counts: its post, and the start of
// the five-minute cell of its own creation time (TrendCellOf).
type TrendCell struct {
	PostID string
	Start  time.Time
}

// TrendCellOf returns the cell of a like or comment on postID made at t.
func TrendCellOf(postID string, t time.Time) TrendCell {
	return TrendCell{PostID: postID, Start: t.UTC().Truncate(TrendCellSpan)}
}

// TrendCount is the likes and comments counted in a cell or a window.
type TrendCount struct{ Likes, Comments int }

// Score is what a post ranks by: its likes plus its comments.
func (c TrendCount) Score() int { return c.Likes + c.Comments }

// PadSequence returns a stream sequence number (decimal digits, of varying
// length) zero-padded to 40 digits, so that two compare as strings as they
// do as numbers.
func PadSequence(seq string) string {
	return strings.Repeat("0", max(40-len(seq), 0)) + seq
}

// trendBucket is one part of one bucket.
type trendBucket struct {
	span  time.Duration
	start time.Time
	part  int
}

func (b trendBucket) key() itemKey { return itemKey{TrendPK(b.span, b.start, b.part), SKTrend} }

// ApplyTrend adds counts, what one stream shard's records counted in one
// tumbling window (or the part of one before Lambda ended it early), to
// every bucket they fall in. mark orders the shard's windows (the padded
// sequence number of the window's first record): each UpdateItem writes
// the part's mark for the shard and applies only if the part's mark is
// older, so a window applied again (a redelivered final invocation) adds
// nothing twice. Counts are split deterministically (by bucket, part and
// sorted post), so the same counts make the same writes: the parts in
// parallel, each part's chunks in order.
func (s *Store) ApplyTrend(ctx context.Context, shardID, mark string, counts map[TrendCell]TrendCount) error {
	const op = "store.ApplyTrend"
	byBucket := map[trendBucket]map[string]TrendCount{}
	for cell, c := range counts {
		if c == (TrendCount{}) || !ValidID(cell.PostID) {
			continue
		}
		for _, w := range TrendSpans {
			b := trendBucket{w.Span, cell.Start.Truncate(w.Span), TrendPart(cell.PostID, w.Parts)}
			if byBucket[b] == nil {
				byBucket[b] = map[string]TrendCount{}
			}
			sum := byBucket[b][cell.PostID]
			byBucket[b][cell.PostID] = TrendCount{sum.Likes + c.Likes, sum.Comments + c.Comments}
		}
	}
	var writes []func(context.Context) error
	for b, posts := range byBucket {
		ids := slices.Sorted(maps.Keys(posts))
		writes = append(writes, func(ctx context.Context) error { // a part's chunks one after the other
			for chunk := 0; chunk*maxTrendPosts < len(ids); chunk++ {
				part := ids[chunk*maxTrendPosts : min((chunk+1)*maxTrendPosts, len(ids))]
				if err := s.addTrend(ctx, op, b, shardID, fmt.Sprintf("%s.%04d", mark, chunk), part, posts); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return inParallel(ctx, writes)
}

// maxTrendPosts is the posts of one UpdateItem of a bucket's part: two ADDs
// each, within an update expression's 4 kB.
const maxTrendPosts = 100

// addTrend adds the posts' counts to the bucket's part, unless the part
// holds the shard's mark already or a later one.
func (s *Store) addTrend(ctx context.Context, op string, b trendBucket, shardID, mark string, ids []string, counts map[string]TrendCount) error {
	markAttr := expression.Name(TrendMarkAttr(shardID))
	expires := b.start.Add(b.span * time.Duration(TrendSpans[TrendWeek].Buckets+1)).Unix()
	upd := expression.Set(markAttr, expression.Value(mark)).Set(expression.Name("ttl"), expression.Value(expires))
	for _, id := range ids {
		if c := counts[id]; c.Likes != 0 {
			upd = upd.Add(expression.Name(TrendLikesAttr(id)), expression.Value(c.Likes))
		}
		if c := counts[id]; c.Comments != 0 {
			upd = upd.Add(expression.Name(TrendCommentsAttr(id)), expression.Value(c.Comments))
		}
	}
	cond := expression.Or(expression.AttributeNotExists(markAttr), markAttr.LessThan(expression.Value(mark)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: b.key().attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // applied before
	}
	if err != nil {
		return fail(op, err)
	}
	return nil
}

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

// TrendProgress is how far the aggregator has applied a stream shard's
// records: every record up to Seq (padded; "" before any), and the flush
// it began and did not end, if any, whose counts may be partly applied.
type TrendProgress struct {
	Seq     string
	Pending *TrendFlush
}

// TrendFlush is one flush of the aggregator's counts: the shard's records
// after the progress up to Last (padded), the first counted being First
// (the mark of its writes, ApplyTrend), and their counts as the aggregator
// encodes them, which the store keeps as they are.
type TrendFlush struct {
	First  string `dynamodbav:"first"`
	Last   string `dynamodbav:"last"`
	Counts string `dynamodbav:"counts"`
}

// trendProgressItem is a shard's progress item: the last record applied,
// and the flush begun (its first and last records; its counts are in an
// item of their own, TrendFlushSK, so that the progress item stays small).
type trendProgressItem struct {
	Seq          string `dynamodbav:"seq"`
	PendingFirst string `dynamodbav:"pendingFirst"`
	PendingLast  string `dynamodbav:"pendingLast"`
}

// trendProgressTTL is how long a shard's progress and flushes are kept
// after their last write: the stream keeps its records 24 hours, and a
// day more.
const trendProgressTTL = 48 * time.Hour

// TrendProgress returns the shard's progress: one strongly consistent
// GetItem of its progress item, and one of the pending flush's counts when
// a flush was begun and not ended.
func (s *Store) TrendProgress(ctx context.Context, shardID string) (TrendProgress, error) {
	const op = "store.TrendProgress"
	var item trendProgressItem
	if _, err := s.getConsistent(ctx, op, itemKey{TrendProgressPK(shardID), SKTrend}, &item); err != nil || item.PendingFirst == "" {
		return TrendProgress{Seq: item.Seq}, err
	}
	var f TrendFlush
	found, err := s.getConsistent(ctx, op, itemKey{TrendProgressPK(shardID), TrendFlushSK(item.PendingFirst)}, &f)
	if err != nil {
		return TrendProgress{}, err
	}
	if !found || f.Last != item.PendingLast {
		return TrendProgress{}, errs.E(op, errs.Internal, "the pending flush's counts are not in the table")
	}
	return TrendProgress{Seq: item.Seq, Pending: &f}, nil
}

// BeginTrendFlush records the flush before any of its counts is applied:
// its counts in an item of their own
// (an UpdateItem, its size in write units; it expires with the progress),
// then the flush as pending on the shard's progress item, on the condition
// that no other flush is pending there and the progress is before
// f.First (Conflict otherwise). A flush killed before that second write
// applied nothing, and is begun again (its counts' item written over); one
// killed after it is found pending by TrendProgress, and ended with the
// same counts, whatever records its retry holds.
func (s *Store) BeginTrendFlush(ctx context.Context, shardID string, f TrendFlush) error {
	const op = "store.BeginTrendFlush"
	expires := s.now().Add(trendProgressTTL).Unix()
	counts := expression.Set(expression.Name("first"), expression.Value(f.First)).Set(expression.Name("last"), expression.Value(f.Last)).
		Set(expression.Name("counts"), expression.Value(f.Counts)).Set(expression.Name("ttl"), expression.Value(expires))
	expr, err := expression.NewBuilder().WithUpdate(counts).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	if _, err := s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey{TrendProgressPK(shardID), TrendFlushSK(f.First)}.attributes(),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}); err != nil {
		return fail(op, err)
	}
	seq, pending := expression.Name("seq"), expression.Name("pendingFirst")
	upd := expression.Set(pending, expression.Value(f.First)).Set(expression.Name("pendingLast"), expression.Value(f.Last)).
		Set(expression.Name("ttl"), expression.Value(expires))
	cond := expression.AttributeNotExists(pending).And(expression.Or(expression.AttributeNotExists(seq), seq.LessThan(expression.Value(f.First))))
	err = s.updateTrendProgress(ctx, op, shardID, upd, cond)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errs.E(op, errs.Conflict, "another flush of the shard is pending, or its records are applied")
	}
	return err
}

// SetTrendProgress records seq (padded) as the shard's last record applied
// and ends the flush pending there, if it ends at seq or before, unless a
// later record is recorded already (then it changes nothing). It is what
// ends a flush begun with BeginTrendFlush once its counts are applied, and
// what moves the progress past records that count nothing.
func (s *Store) SetTrendProgress(ctx context.Context, shardID, seq string) error {
	const op = "store.SetTrendProgress"
	seqAttr, last := expression.Name("seq"), expression.Name("pendingLast")
	upd := expression.Set(seqAttr, expression.Value(seq)).Set(expression.Name("ttl"), expression.Value(s.now().Add(trendProgressTTL).Unix())).
		Remove(expression.Name("pendingFirst")).Remove(last)
	cond := expression.And(
		expression.Or(expression.AttributeNotExists(seqAttr), seqAttr.LessThan(expression.Value(seq))),
		expression.Or(expression.AttributeNotExists(last), last.LessThanEqual(expression.Value(seq))))
	err := s.updateTrendProgress(ctx, op, shardID, upd, cond)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // a later record recorded already
	}
	return err
}

func (s *Store) updateTrendProgress(ctx context.Context, op, shardID string, upd expression.UpdateBuilder, cond expression.ConditionBuilder) error {
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey{TrendProgressPK(shardID), SKTrend}.attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return fail(op, err)
	}
	return err
}

// TrendingPost is a post of a ranking, with what it received in the window.
type TrendingPost struct {
	Post Post
	TrendCount
}

// Trending returns up to limit (at most MaxTrending) published posts by
// their score in the window at now, highest first, ties to the newer post
// (the greater ID): one BatchGetItem of the window's buckets and one of its
// top posts (with their counts), kept for HotPageTTL in the environment.
// A deleted post and a draft are left out.
func (s *Store) Trending(ctx context.Context, window TrendWindow, limit int) ([]TrendingPost, error) {
	const op = "store.Trending"
	if _, ok := TrendSpans[window]; !ok {
		return nil, errs.E(op, errs.Validation, "no such window: "+string(window))
	}
	read := func(ctx context.Context) ([]TrendingPost, error) { return s.trending(ctx, op, window) }
	var (
		top []TrendingPost
		err error
	)
	if s.pages.ttl > 0 {
		top, err = through(ctx, s,
			func() *kept[[]TrendingPost] { return s.pages.trending[window] },
			func(k *kept[[]TrendingPost]) { s.pages.trending[window] = k }, read)
	} else {
		top, err = read(ctx)
	}
	if err != nil {
		return nil, err
	}
	return top[:min(limit, len(top))], nil
}

// trending reads the window's ranking, as Trending returns it, from the
// table.
func (s *Store) trending(ctx context.Context, op string, window TrendWindow) ([]TrendingPost, error) {
	ranked, err := s.rank(ctx, op, window)
	if err != nil {
		return nil, err
	}
	var top []TrendingPost
	for len(ranked) > 0 && len(top) < MaxTrending {
		n := min(len(ranked), MaxPostsRead)
		ids := make([]string, n)
		for i := range n {
			ids[i] = ranked[i].Post.ID
		}
		posts, err := s.Posts(ctx, ids)
		if err != nil {
			return nil, err
		}
		for _, t := range ranked[:n] {
			if p, ok := posts[t.Post.ID]; ok && p.Published() && len(top) < MaxTrending {
				top = append(top, TrendingPost{Post: p, TrendCount: t.TrendCount})
			}
		}
		ranked = ranked[n:]
	}
	return top, nil
}

// MaxPostsRead is the posts trending reads at once: BatchGetItem's 100
// keys, a post's own item and its counter each.
const MaxPostsRead = 50

// rank sums the window's buckets at now: the posts with a positive score,
// by score and then ID, both descending.
func (s *Store) rank(ctx context.Context, op string, window TrendWindow) ([]TrendingPost, error) {
	w := TrendSpans[window]
	now := s.now().UTC().Truncate(w.Span)
	keys := make([]itemKey, 0, w.Buckets*w.Parts)
	for i := range w.Buckets {
		for part := range w.Parts {
			keys = append(keys, trendBucket{w.Span, now.Add(-time.Duration(i) * w.Span), part}.key())
		}
	}
	items, err := s.batchGet(ctx, op, keys, nil)
	if err != nil {
		return nil, err
	}
	sums := map[string]TrendCount{}
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
	ranked := make([]TrendingPost, 0, len(sums))
	for id, c := range sums {
		if c.Score() > 0 {
			ranked = append(ranked, TrendingPost{Post: Post{ID: id}, TrendCount: c})
		}
	}
	sort.Slice(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		return a.Score() > b.Score() || a.Score() == b.Score() && a.Post.ID > b.Post.ID
	})
	return ranked, nil
}
