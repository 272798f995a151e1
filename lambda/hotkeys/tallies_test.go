package hotkeys_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/store"
)

// updates is a client that records the tallies' UpdateItems (the counter's
// partition and the versions written), and fails those on the partitions
// it is told to; it answers nothing else (its other methods are nil's).
type updates struct {
	store.API
	log  *[]string
	fail map[string]bool
}

// table is the table of a client.
type table struct{ api store.API }

func (t table) API() store.API { return t.api }
func (t table) Table() string  { return "t" }

func (u updates) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	pk := in.Key[store.AttrPK].(*types.AttributeValueMemberS).Value
	var versions []string
	for _, v := range in.ExpressionAttributeValues {
		if m, ok := v.(*types.AttributeValueMemberM); ok {
			versions = append(versions, "v"+m.Value["v"].(*types.AttributeValueMemberN).Value)
		}
	}
	slices.Sort(versions)
	*u.log = append(*u.log, pk+" "+strings.Join(versions, ","))
	if u.fail[pk] {
		return nil, errors.New("injected")
	}
	return &dynamodb.UpdateItemOutput{}, nil
}

func shardRecord(pk string, shard int, version int64) events.DynamoDBEventRecord {
	return events.DynamoDBEventRecord{EventName: "MODIFY", Change: events.DynamoDBStreamRecord{
		Keys: map[string]events.DynamoDBAttributeValue{store.AttrPK: events.NewStringAttribute(pk), store.AttrSK: events.NewStringAttribute(store.SKShard)},
		NewImage: map[string]events.DynamoDBAttributeValue{"shard": events.NewNumberAttribute(strconv.Itoa(shard)),
			"version": events.NewNumberAttribute(strconv.FormatInt(version, 10)), "likeCount": events.NewNumberAttribute("2")}}}
}

// A batch's tallies: a parent's shards' latest versions in one write, the
// others' records (another item, a shard counter's deletion) ignored, and a
// parent's failure reported at its first record, naming it.
func TestABatchsTalliesAreOneWriteAParent(t *testing.T) {
	other := events.DynamoDBEventRecord{Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{
		store.AttrPK: events.NewStringAttribute("USER#u_a"), store.AttrSK: events.NewStringAttribute("FOLLOWS#u_b")}}}
	deleted := shardRecord(hotkeys.ShardPK("p0", 3), 3, 9)
	deleted.Change.NewImage = nil
	records := []events.DynamoDBEventRecord{
		other, deleted,
		shardRecord(hotkeys.ShardPK("p1", 1), 1, 2), // 2: p1's first
		shardRecord(hotkeys.UserShardPK("u1", 0), 0, 5),
		shardRecord(hotkeys.ShardPK("p1", 1), 1, 1), // older, after
		shardRecord(hotkeys.ShardPK("p1", 4), 4, 7),
	}
	var log []string
	failAt, err := hotkeys.NewTallies(table{updates{log: &log}}).ApplyBatch(t.Context(), records)
	want := []string{"POST#p1 v2,v7", "USER#u1 v5"}
	if failAt != len(records) || err != nil || !slices.Equal(log, want) {
		t.Errorf("applied %q, %d, %v; want %q, all", log, failAt, err, want)
	}

	log = nil
	failAt, err = hotkeys.NewTallies(table{updates{log: &log, fail: map[string]bool{"POST#p1": true}}}).ApplyBatch(t.Context(), records)
	if failAt != 2 || err == nil || !strings.Contains(err.Error(), "POST#p1") || errs.KindOf(err) != errs.Throttled && errs.KindOf(err) != errs.Internal {
		t.Errorf("a parent's write failing: %d, %v; want 2, an error naming POST#p1", failAt, err)
	}
	if len(log) != 2 {
		t.Errorf("applied %q: want the other parent's tallies written too", log)
	}
}
