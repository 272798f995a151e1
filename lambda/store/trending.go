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

// TrendProgress returns the last sequence number (padded) of shardID whose
// records the aggregator has applied, "" before any: a record at or before
// it, delivered again in a later window, is not counted twice.
func (s *Store) TrendProgress(ctx context.Context, shardID string) (string, error) {
	var progress struct {
		Seq string `dynamodbav:"seq"`
	}
	_, err := s.getConsistent(ctx, "store.TrendProgress", itemKey{TrendProgressPK(shardID), SKTrend}, &progress)
	return progress.Seq, err
}

// SetTrendProgress records seq (padded) as applied on shardID, unless a
// later one is recorded. It expires with the stream's records (24 hours),
// and a day after.
func (s *Store) SetTrendProgress(ctx context.Context, shardID, seq string) error {
	const op = "store.SetTrendProgress"
	seqAttr := expression.Name("seq")
	upd := expression.Set(seqAttr, expression.Value(seq)).Set(expression.Name("ttl"), expression.Value(s.now().Add(48*time.Hour).Unix()))
	cond := expression.Or(expression.AttributeNotExists(seqAttr), seqAttr.LessThan(expression.Value(seq)))
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
	return nil
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
