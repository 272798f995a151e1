// Package capacity is a capacity model of the table: it records the exact
// requests the store makes for a workload (Recorder, at store.API, against
// DynamoDB Local), costs each by DynamoDB's documented rules (Documented)
// and by DynamoDB Local's own accounting (Local, which a test checks
// against what DynamoDB Local reports), maps every unit onto the partition
// key it lands on, and says, for a workload at a rate, which partition
// keys pass their limit and the highest rate the design sustains (Model).
//
// Conservative rules: a partition key is one partition, of 1,000 write and
// 3,000 read units a second (split for heat is neither instant nor
// guaranteed, and cannot split one item or spread writes at the end of a
// ULID range).
package capacity

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"regexp"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Item is an item's attributes (nil: absent).
type Item = map[string]types.AttributeValue

// Request is one DynamoDB request, as the model costs it: the whole items
// it read (whatever its projection or filter: DynamoDB charges what it
// reads) and, for a write, each item before and after.
type Request struct {
	Operation     string
	Index         string // the index a Query read ("": the table)
	PK            string // the partition key a Query read, from its key condition
	Consistent    bool   // a strongly consistent read
	Transactional bool
	Failed        bool // refused (a condition failed, a transaction cancelled): not costed
	// Reads are the items read: a GetItem's or BatchGetItem's one per key
	// (Found false when absent), a Query's every item it read, with the
	// partition key they share.
	Reads []Read
	// Writes are the items a write touched (a ConditionCheck's item too).
	Writes []Write
	// Reported is DynamoDB's consumed capacity for the request, by where
	// ("" for the table, else the index's name).
	Reported map[string]float64
}

// Read is an item read, or a key read that found nothing.
type Read struct {
	PK    string
	Item  Item
	Found bool
}

// Write is an item as it was before a write and after it (nil: absent).
type Write struct {
	PK            string
	Before, After Item
	Check         bool // a ConditionCheck: read, not written
}

// Recorder is a store.API that records every request it passes to the
// client. To know the whole items, it reads them itself around each
// request (those reads are not recorded): workloads must run their writes
// one at a time.
type Recorder struct {
	client *dynamodb.Client
	table  string

	mu       sync.Mutex
	requests []Request
	err      error // the first of its own reads that failed
}

var _ store.API = (*Recorder)(nil)

// NewRecorder records the requests made through client to table.
func NewRecorder(client *dynamodb.Client, table string) *Recorder {
	return &Recorder{client: client, table: table}
}

// Take returns the requests recorded since the last Take.
func (r *Recorder) Take() []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.requests
	r.requests = nil
	return out
}

func (r *Recorder) add(req Request) {
	req.PK = stableShard(req.PK)
	for i := range req.Reads {
		req.Reads[i].PK = stableShard(req.Reads[i].PK)
	}
	for i := range req.Writes {
		req.Writes[i].PK = stableShard(req.Writes[i].PK)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.requests = append(r.requests, req)
}

// streamShard is a stream shard's ID as DynamoDB Local makes it, anew for
// each table: in a partition key (the trending aggregator's progress), the
// model writes it as "<stream shard>", so that its figures are the same
// every run.
var streamShard = regexp.MustCompile(`shardId-[0-9]+-[0-9a-f]+`)

func stableShard(pk string) string { return streamShard.ReplaceAllLiteralString(pk, "<stream shard>") }

// raw is the context of the recorder's own reads: no meter, no deadline of
// the request's.
var raw = context.Background()

// readAttempts and retryDelay bound the recorder's tries of its own reads:
// the delay doubles after each failed one, none after the last.
var (
	readAttempts = 8
	retryDelay   = 50 * time.Millisecond
)

// item reads the whole item of key, nil when absent. A read that fails
// (DynamoDB Local on a loaded machine) is tried again, and past that kept
// in Err: an item taken for absent would cost a request nothing it read.
func (r *Recorder) item(key Item, consistent bool) Item {
	var err error
	for attempt := range readAttempts {
		var out *dynamodb.GetItemOutput
		if out, err = r.client.GetItem(raw, &dynamodb.GetItemInput{TableName: aws.String(r.table), Key: key, ConsistentRead: aws.Bool(consistent)}); err == nil {
			if len(out.Item) == 0 {
				return nil
			}
			return out.Item
		}
		if attempt < readAttempts-1 {
			time.Sleep(retryDelay << attempt)
		}
	}
	r.mu.Lock()
	r.err = cmp.Or(r.err, fmt.Errorf("capacity: the recorder's read of %v: %w", key, err))
	r.mu.Unlock()
	return nil
}

// Err is the first of the recorder's own reads that failed: what it
// recorded since is not to be trusted.
func (r *Recorder) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func pkOf(item Item) string {
	v, _ := item[store.AttrPK].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

func reported(ccs ...types.ConsumedCapacity) map[string]float64 {
	out := map[string]float64{}
	for _, cc := range ccs {
		if cc.Table != nil {
			out[""] += aws.ToFloat64(cc.Table.CapacityUnits)
		}
		for name, c := range cc.GlobalSecondaryIndexes {
			out[name] += aws.ToFloat64(c.CapacityUnits)
		}
	}
	return out
}

func failed(err error) bool {
	var ccf *types.ConditionalCheckFailedException
	var tc *types.TransactionCanceledException
	return errors.As(err, &ccf) || errors.As(err, &tc)
}

func (r *Recorder) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	out, err := r.client.GetItem(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	whole := r.item(in.Key, aws.ToBool(in.ConsistentRead))
	req := Request{Operation: "GetItem", Consistent: aws.ToBool(in.ConsistentRead), Reads: []Read{{PK: pkOf(in.Key), Item: whole, Found: whole != nil}}}
	if out.ConsumedCapacity != nil {
		req.Reported = reported(*out.ConsumedCapacity)
	}
	r.add(req)
	return out, nil
}

func (r *Recorder) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	out, err := r.client.BatchGetItem(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	req := Request{Operation: "BatchGetItem", Reported: reported(out.ConsumedCapacity...)}
	unprocessed := map[string]bool{}
	for _, ka := range out.UnprocessedKeys {
		for _, k := range ka.Keys {
			unprocessed[keyString(k)] = true
		}
	}
	for _, ka := range in.RequestItems {
		req.Consistent = aws.ToBool(ka.ConsistentRead)
		for _, k := range ka.Keys {
			if unprocessed[keyString(k)] {
				continue
			}
			whole := r.item(k, req.Consistent)
			req.Reads = append(req.Reads, Read{PK: pkOf(k), Item: whole, Found: whole != nil})
		}
	}
	r.add(req)
	return out, nil
}

func keyString(k Item) string {
	sk, _ := k[store.AttrSK].(*types.AttributeValueMemberS)
	if sk == nil {
		return pkOf(k)
	}
	return pkOf(k) + "\x00" + sk.Value
}

// placeholder finds the expression attribute names and values a key
// condition uses.
var placeholder = regexp.MustCompile(`[#:][A-Za-z0-9_]+`)

func (r *Recorder) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	out, err := r.client.Query(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	// The same Query without its projection and filter reads the same
	// items (a Limit counts items before the filter), whole.
	whole := &dynamodb.QueryInput{TableName: in.TableName, IndexName: in.IndexName, KeyConditionExpression: in.KeyConditionExpression,
		ConsistentRead: in.ConsistentRead, ExclusiveStartKey: in.ExclusiveStartKey, Limit: in.Limit, ScanIndexForward: in.ScanIndexForward}
	for _, p := range placeholder.FindAllString(aws.ToString(in.KeyConditionExpression), -1) {
		if n, ok := in.ExpressionAttributeNames[p]; ok {
			if whole.ExpressionAttributeNames == nil {
				whole.ExpressionAttributeNames = map[string]string{}
			}
			whole.ExpressionAttributeNames[p] = n
		}
		if v, ok := in.ExpressionAttributeValues[p]; ok {
			if whole.ExpressionAttributeValues == nil {
				whole.ExpressionAttributeValues = Item{}
			}
			whole.ExpressionAttributeValues[p] = v
		}
	}
	read, werr := r.client.Query(raw, whole)
	if werr != nil {
		return out, werr
	}
	req := Request{Operation: "Query", Index: aws.ToString(in.IndexName), Consistent: aws.ToBool(in.ConsistentRead)}
	if out.ConsumedCapacity != nil {
		req.Reported = reported(*out.ConsumedCapacity)
	}
	pk := store.AttrPK
	if req.Index != "" {
		pk = indexPK(req.Index)
	}
	for _, m := range equality.FindAllStringSubmatch(aws.ToString(in.KeyConditionExpression), -1) {
		if in.ExpressionAttributeNames[m[1]] == pk {
			req.PK = attr(in.ExpressionAttributeValues, m[2])
		}
	}
	for _, item := range read.Items {
		req.Reads = append(req.Reads, Read{PK: attr(item, pk), Item: item, Found: true})
	}
	r.add(req)
	return out, nil
}

// equality finds "#name = :value" in a key condition.
var equality = regexp.MustCompile(`(#[A-Za-z0-9_]+) = (:[A-Za-z0-9_]+)`)

func (r *Recorder) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	type pending struct {
		key    Item
		before Item
		put    Item
	}
	var ws []pending
	for _, reqs := range in.RequestItems {
		for _, wr := range reqs {
			var p pending
			if wr.PutRequest != nil {
				p.put = wr.PutRequest.Item
				p.key = Item{store.AttrPK: p.put[store.AttrPK], store.AttrSK: p.put[store.AttrSK]}
			} else {
				p.key = wr.DeleteRequest.Key
			}
			p.before = r.item(p.key, true)
			ws = append(ws, p)
		}
	}
	out, err := r.client.BatchWriteItem(ctx, in, opts...)
	if err != nil {
		return out, err
	}
	unprocessed := map[string]bool{}
	for _, reqs := range out.UnprocessedItems {
		for _, wr := range reqs {
			if wr.PutRequest != nil {
				unprocessed[keyString(wr.PutRequest.Item)] = true
			} else {
				unprocessed[keyString(wr.DeleteRequest.Key)] = true
			}
		}
	}
	req := Request{Operation: "BatchWriteItem", Reported: reported(out.ConsumedCapacity...)}
	for _, p := range ws {
		if !unprocessed[keyString(p.key)] {
			req.Writes = append(req.Writes, Write{PK: pkOf(p.key), Before: p.before, After: p.put})
		}
	}
	r.add(req)
	return out, nil
}

func (r *Recorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	before := r.item(in.Key, true)
	out, err := r.client.UpdateItem(ctx, in, opts...)
	if err != nil && !failed(err) {
		return out, err
	}
	req := Request{Operation: "UpdateItem", Failed: err != nil, Writes: []Write{{PK: pkOf(in.Key), Before: before, After: r.item(in.Key, true)}}}
	if out != nil && out.ConsumedCapacity != nil {
		req.Reported = reported(*out.ConsumedCapacity)
	}
	r.add(req)
	return out, err
}

func (r *Recorder) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	in.ReturnConsumedCapacity = types.ReturnConsumedCapacityIndexes
	keys := make([]Item, len(in.TransactItems))
	req := Request{Operation: "TransactWriteItems", Transactional: true, Writes: make([]Write, len(in.TransactItems))}
	for i, ti := range in.TransactItems {
		switch {
		case ti.Put != nil:
			keys[i] = Item{store.AttrPK: ti.Put.Item[store.AttrPK], store.AttrSK: ti.Put.Item[store.AttrSK]}
		case ti.Update != nil:
			keys[i] = ti.Update.Key
		case ti.Delete != nil:
			keys[i] = ti.Delete.Key
		case ti.ConditionCheck != nil:
			keys[i] = ti.ConditionCheck.Key
			req.Writes[i].Check = true
		}
		req.Writes[i].PK = pkOf(keys[i])
		req.Writes[i].Before = r.item(keys[i], true)
	}
	out, err := r.client.TransactWriteItems(ctx, in, opts...)
	if err != nil && !failed(err) {
		return out, err
	}
	req.Failed = err != nil
	for i := range req.Writes {
		req.Writes[i].After = r.item(keys[i], true)
	}
	if out != nil {
		req.Reported = reported(out.ConsumedCapacity...)
	}
	r.add(req)
	return out, err
}

func attr(item Item, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

// indexPK is the partition key attribute of the index.
func indexPK(index string) string {
	for _, ix := range store.Schema.Indexes {
		if ix.Name == index {
			return ix.Keys.PartitionKey
		}
	}
	return ""
}
