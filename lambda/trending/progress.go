package trending

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Progress is how far the aggregator has applied a stream shard's records:
// every record up to Seq (padded; "" before any), and the flush it began
// and did not end, if any, whose counts may be partly applied.
type Progress struct {
	Seq     string
	Pending *Flush
}

// Flush is one flush of the aggregator's counts: the shard's records after
// the progress up to Last (padded), the first counted being First (the mark
// of its writes, Apply), and their counts as the aggregator encodes them,
// which the table keeps as they are.
type Flush struct {
	First  string `dynamodbav:"first"`
	Last   string `dynamodbav:"last"`
	Counts string `dynamodbav:"counts"`
}

// progressItem is a shard's progress item: the last record applied, and the
// flush begun (its first and last records; its counts are in an item of
// their own, flushSK, so that the progress item stays small).
type progressItem struct {
	Seq          string `dynamodbav:"seq"`
	PendingFirst string `dynamodbav:"pendingFirst"`
	PendingLast  string `dynamodbav:"pendingLast"`
}

// progressTTL is how long a shard's progress and flushes are kept after
// their last write: the stream keeps its records 24 hours, and a day more.
const progressTTL = 48 * time.Hour

// Progress returns the shard's progress: one strongly consistent GetItem of
// its progress item, and one of the pending flush's counts when a flush was
// begun and not ended.
func (b *Buckets) Progress(ctx context.Context, shardID string) (Progress, error) {
	const op = "trending.Progress"
	var item progressItem
	if _, err := b.s.GetConsistent(ctx, op, store.Key{PK: progressPK(shardID), SK: trendSK}, &item); err != nil || item.PendingFirst == "" {
		return Progress{Seq: item.Seq}, err
	}
	var f Flush
	found, err := b.s.GetConsistent(ctx, op, store.Key{PK: progressPK(shardID), SK: flushSK(item.PendingFirst)}, &f)
	if err != nil {
		return Progress{}, err
	}
	if !found || f.Last != item.PendingLast {
		return Progress{}, errs.E(op, errs.Internal, "the pending flush's counts are not in the table")
	}
	return Progress{Seq: item.Seq, Pending: &f}, nil
}

// BeginFlush records the flush before any of its counts is applied: its
// counts in an item of their own (an UpdateItem, its size in write units;
// it expires with the progress), then the flush as pending on the shard's
// progress item, on the condition that no other flush is pending there and
// the progress is before f.First (Conflict otherwise). A flush killed
// before that second write applied nothing, and is begun again (its counts'
// item written over); one killed after it is found pending by Progress, and
// ended with the same counts, whatever records its retry holds.
func (b *Buckets) BeginFlush(ctx context.Context, shardID string, f Flush) error {
	const op = "trending.BeginFlush"
	expires := b.s.Now().Add(progressTTL).Unix()
	counts := expression.Set(expression.Name("first"), expression.Value(f.First)).Set(expression.Name("last"), expression.Value(f.Last)).
		Set(expression.Name("counts"), expression.Value(f.Counts)).Set(expression.Name("ttl"), expression.Value(expires))
	if err := b.update(ctx, op, store.Key{PK: progressPK(shardID), SK: flushSK(f.First)}, counts, expression.ConditionBuilder{}); err != nil {
		return err
	}
	seq, pending := expression.Name("seq"), expression.Name("pendingFirst")
	upd := expression.Set(pending, expression.Value(f.First)).Set(expression.Name("pendingLast"), expression.Value(f.Last)).
		Set(expression.Name("ttl"), expression.Value(expires))
	cond := expression.AttributeNotExists(pending).And(expression.Or(expression.AttributeNotExists(seq), seq.LessThan(expression.Value(f.First))))
	err := b.update(ctx, op, store.Key{PK: progressPK(shardID), SK: trendSK}, upd, cond)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return errs.E(op, errs.Conflict, "another flush of the shard is pending, or its records are applied")
	}
	return err
}

// SetProgress records seq (padded) as the shard's last record applied and
// ends the flush pending there, if it ends at seq or before, unless a later
// record is recorded already (then it changes nothing). It is what ends a
// flush begun with BeginFlush once its counts are applied, and what moves
// the progress past records that count nothing.
func (b *Buckets) SetProgress(ctx context.Context, shardID, seq string) error {
	const op = "trending.SetProgress"
	seqName, last := expression.Name("seq"), expression.Name("pendingLast")
	upd := expression.Set(seqName, expression.Value(seq)).Set(expression.Name("ttl"), expression.Value(b.s.Now().Add(progressTTL).Unix())).
		Remove(expression.Name("pendingFirst")).Remove(last)
	cond := expression.And(
		expression.Or(expression.AttributeNotExists(seqName), seqName.LessThan(expression.Value(seq))),
		expression.Or(expression.AttributeNotExists(last), last.LessThanEqual(expression.Value(seq))))
	err := b.update(ctx, op, store.Key{PK: progressPK(shardID), SK: trendSK}, upd, cond)
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // a later record recorded already
	}
	return err
}
