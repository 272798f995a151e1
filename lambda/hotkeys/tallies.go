// Package hotkeys spreads a hot post's likes and comments, and a hot
// user's followers, over shard partitions: a layer under the store's access
// patterns (its store.Spread: Layer, given by the option Spread), which
// says where each new child is written and counted (writes.go: a parent
// turns hot at HotThreshold), reads a page of a parent's children from its
// partition and its shards together (pages.go), counts a writer's own
// writes at once (own.go), and, as the projector's first step, copies each
// shard's counts onto its parent's counter from the table's stream
// (Tallies). Its key formats are in keys.go. A store without it keeps
// every child in its parent's partition.
package hotkeys

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Table is what the tallies write through: the store's client and table.
type Table interface {
	API() store.API
	Table() string
}

// Tallies copies hot posts' and users' shard counts onto their counters:
// the projector's first step on each batch (projector.Batch), one write a
// post or user for the whole batch, where a write a record would put a
// write unit per like or follow on the parent's partition.
type Tallies struct{ table Table }

// NewTallies returns the tallies of t's hot keys.
func NewTallies(t Table) *Tallies { return &Tallies{table: t} }

// ApplyBatch applies the batch's shard counters' latest counts, a parent's
// at once, and returns the index of the first record of the first parent
// whose tallies it could not apply (len(records) when all were), with the
// failures, each naming its parent.
func (t *Tallies) ApplyBatch(ctx context.Context, records []events.DynamoDBEventRecord) (int, error) {
	failAt := len(records)
	var failed []error
	tallies, first := read(records)
	for _, parent := range slices.Sorted(maps.Keys(tallies)) {
		if err := t.Apply(ctx, parent, tallies[parent]); err != nil {
			failed = append(failed, fmt.Errorf("shard counts of %s not applied: %w", parent, err))
			failAt = min(failAt, first[parent])
		}
	}
	return failAt, errors.Join(failed...)
}

// read reads the batch's records of shard counters: by the partition of
// their hot post or user, each shard's latest counts (the highest
// version), and the index of its first such record.
func read(records []events.DynamoDBEventRecord) (map[string]map[int]store.ShardTally, map[string]int) {
	out, first := map[string]map[int]store.ShardTally{}, map[string]int{}
	for i, r := range records {
		img := r.Change.NewImage
		if projector.ImageString(r.Change.Keys, store.AttrSK) != store.SKShard || img == nil {
			continue // not a shard counter, or its deletion (with its post)
		}
		parent, ok := shardParent(projector.ImageString(r.Change.Keys, store.AttrPK))
		shard, ok1 := num(img, "shard")
		version, ok2 := num(img, "version")
		if !ok || !ok1 || !ok2 {
			continue
		}
		likes, _ := num(img, "likeCount")
		comments, _ := num(img, "commentCount")
		followers, _ := num(img, "followerCount")
		if out[parent] == nil {
			out[parent], first[parent] = map[int]store.ShardTally{}, i
		}
		if t, seen := out[parent][int(shard)]; !seen || t.Version < version {
			out[parent][int(shard)] = store.ShardTally{Likes: int(likes), Comments: int(comments), Followers: int(followers), Version: version}
		}
	}
	return out, first
}

func num(img map[string]events.DynamoDBAttributeValue, name string) (int64, bool) {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeNumber {
		return 0, false
	}
	n, err := v.Integer()
	return n, err == nil
}

// Apply copies shards' counts (by shard) onto the counter of the hot post
// or user whose partition is parent ("POST#<id>", "USER#<id>":
// shardParent), each only if newer than what is there (its version):
// one UpdateItem for all of them, or, when one is not newer, one for each
// of the others. A redelivered or out-of-order record's tally changes
// nothing; a deleted post's are dropped.
func (t *Tallies) Apply(ctx context.Context, parent string, tallies map[int]store.ShardTally) error {
	const op = "hotkeys.Apply"
	if _, ok := shardParent(parent + "#00"); !ok {
		return errs.E(op, errs.Validation, "not a hot post's or user's partition")
	}
	shards := slices.Sorted(maps.Keys(tallies))
	err := t.apply(ctx, op, parent, shards, tallies)
	var ccf *types.ConditionalCheckFailedException
	if len(shards) == 1 || !errors.As(err, &ccf) {
		if errors.As(err, &ccf) {
			return nil // stale, or the post is gone
		}
		return err
	}
	for _, n := range shards {
		if err := t.apply(ctx, op, parent, []int{n}, tallies); err != nil && !errors.As(err, &ccf) {
			return err
		}
	}
	return nil
}

func (t *Tallies) apply(ctx context.Context, op, parent string, shards []int, tallies map[int]store.ShardTally) error {
	var upd expression.UpdateBuilder
	cond := expression.AttributeExists(expression.Name("hot"))
	for i, n := range shards {
		name := expression.Name("hot." + shardName(n))
		if i == 0 {
			upd = expression.Set(name, expression.Value(tallies[n]))
		} else {
			upd = upd.Set(name, expression.Value(tallies[n]))
		}
		cond = cond.And(expression.Or(expression.AttributeNotExists(name),
			expression.Name("hot."+shardName(n)+".v").LessThan(expression.Value(tallies[n].Version))))
	}
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = t.table.API().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(t.table.Table()), Key: store.Key{PK: parent, SK: store.SKCount}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if err != nil && !errors.As(err, &ccf) {
		return store.Fail(op, err)
	}
	return err
}
