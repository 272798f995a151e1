// Package streams reads a table's DynamoDB stream from DynamoDB Local and
// invokes a function with it as Lambda's event source mapping does: batches
// of up to BatchSize records of one shard, in order, as the JSON of an
// events.DynamoDBEvent; records the filter does not match are never
// delivered; a batch that fails is retried (from the lowest sequence number
// the function reports in batchItemFailures, or whole when it fails, or
// reports an identifier that names no record of the batch), bisected on
// error when asked, and after MaxRetries retries handed to the on-failure
// destination, and the shard moves on. A checkpoint per shard records what
// was delivered: a poller started again with the same checkpoints resumes
// after it (records delivered but not checkpointed, when the process dies
// mid-batch, are delivered again: at least once, as in Lambda).
//
// What DynamoDB Local cannot show: one shard holds everything (no
// partitions, so no parallel shards and no splits to follow under load),
// iterators do not expire as AWS's do after 15 minutes, and no record is
// trimmed after 24 hours. The poller still follows closed shards to their
// children, as it must in AWS.
package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// API is what the poller calls of DynamoDB Streams.
type API interface {
	DescribeStream(ctx context.Context, in *dynamodbstreams.DescribeStreamInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.DescribeStreamOutput, error)
	GetShardIterator(ctx context.Context, in *dynamodbstreams.GetShardIteratorInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetShardIteratorOutput, error)
	GetRecords(ctx context.Context, in *dynamodbstreams.GetRecordsInput, opts ...func(*dynamodbstreams.Options)) (*dynamodbstreams.GetRecordsOutput, error)
}

// Function is the function the records go to: a lambda.Handler.
type Function interface {
	Invoke(ctx context.Context, payload []byte) ([]byte, error)
}

// Config is the event source mapping's settings (the stack's).
type Config struct {
	BatchSize  int // records per invocation, at most
	MaxRetries int // retries of a failed batch before the on-failure destination
	Bisect     bool
	// Timeout is the function's timeout: each invocation's deadline.
	Timeout time.Duration
	// Filter keeps the records the event source's filter criteria match;
	// nil keeps every record.
	Filter func(events.DynamoDBEventRecord) bool
	// OnFailure receives what the on-failure destination would: the
	// records of a batch that exhausted its retries (or that could not be
	// read at all).
	OnFailure func(Failure)
	Region    string // the records' awsRegion
	// OnError hears of a poll that failed (Run polls again after its
	// interval, from the checkpoints); nil ignores them.
	OnError func(error)
	// Window is the tumbling window (TumblingWindowInSeconds; windows.go),
	// 0 for none.
	Window time.Duration
}

// Failure is a batch given up on, as the on-failure destination records it.
type Failure struct {
	ShardID               string
	StartSequence, EndSeq string
	Records               int
	Condition             string // "RetryAttemptsExhausted"
	Err                   error  // the last error, if the function failed rather than reported items
}

// Checkpoints are the last sequence number delivered, by shard. They outlive
// a poller, so that another one resumes where it stopped.
type Checkpoints struct {
	mu   sync.Mutex
	last map[string]string
}

func (c *Checkpoints) get(shard string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.last[shard]
}

func (c *Checkpoints) set(shard, seq string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil {
		c.last = map[string]string{}
	}
	c.last[shard] = seq
}

// Poller delivers one stream's records to a function.
type Poller struct {
	api         API
	streamARN   string
	fn          Function
	cfg         Config
	checkpoints *Checkpoints

	iterators map[string]*string   // an open iterator per shard; nil entry: the shard is closed and drained
	windows   map[string]*window   // each shard's open tumbling window (windows.go)
	closed    map[string]time.Time // the end of each shard's last window closed
	// Invocations counts the function's invocations; Delivered the records
	// sent (retries included).
	Invocations, Delivered int
}

// New returns a poller of the stream streamARN, resuming after checkpoints.
func New(api API, streamARN string, fn Function, cfg Config, checkpoints *Checkpoints) *Poller {
	if cfg.BatchSize < 1 {
		cfg.BatchSize = 100
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	return &Poller{api: api, streamARN: streamARN, fn: fn, cfg: cfg, checkpoints: checkpoints, iterators: map[string]*string{}, windows: map[string]*window{}, closed: map[string]time.Time{}}
}

// Run polls until ctx is done, every interval when the stream is idle. A
// poll that fails is reported to OnError and tried again after interval,
// from the checkpoints.
func (p *Poller) Run(ctx context.Context, interval time.Duration) {
	for {
		if _, err := p.Poll(ctx); err != nil && ctx.Err() == nil && p.cfg.OnError != nil {
			p.cfg.OnError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(interval):
		}
	}
}

// Poll delivers every record the stream holds now, and returns how many it
// read (filtered out ones included).
func (p *Poller) Poll(ctx context.Context) (int, error) {
	shards, err := p.shards(ctx)
	if err != nil {
		return 0, err
	}
	read := 0
	for _, s := range shards {
		if parent := aws.ToString(s.ParentShardId); parent != "" && !p.drained(parent, shards) {
			continue // a child waits for its parent's last record
		}
		n, err := p.drain(ctx, s)
		read += n
		if err != nil {
			return read, err
		}
	}
	if p.cfg.Window > 0 {
		return read, p.closeEnded(ctx, time.Now())
	}
	return read, nil
}

// drained reports whether the shard named id is read to its end (or gone
// from the stream: trimmed).
func (p *Poller) drained(id string, shards []types.Shard) bool {
	it, seen := p.iterators[id]
	for _, s := range shards {
		if aws.ToString(s.ShardId) == id {
			return seen && it == nil
		}
	}
	return true
}

func (p *Poller) shards(ctx context.Context) ([]types.Shard, error) {
	var shards []types.Shard
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(p.streamARN)}
	for {
		out, err := p.api.DescribeStream(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("describe stream: %w", err)
		}
		shards = append(shards, out.StreamDescription.Shards...)
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return shards, nil
		}
		in.ExclusiveStartShardId = out.StreamDescription.LastEvaluatedShardId
	}
}

// drain reads the shard as far as it goes now, delivering batch by batch.
func (p *Poller) drain(ctx context.Context, s types.Shard) (int, error) {
	id := aws.ToString(s.ShardId)
	it, seen := p.iterators[id]
	if seen && it == nil {
		return 0, nil // closed and read to its end
	}
	if !seen {
		in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(p.streamARN), ShardId: s.ShardId,
			ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
		if last := p.checkpoints.get(id); last != "" {
			in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(last)
		}
		out, err := p.api.GetShardIterator(ctx, in)
		if err != nil {
			return 0, fmt.Errorf("shard iterator of %s: %w", id, err)
		}
		it = out.ShardIterator
	}
	read := 0
	for {
		out, err := p.api.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(int32(p.cfg.BatchSize))})
		if err != nil {
			delete(p.iterators, id) // start again from the checkpoint
			return read, fmt.Errorf("records of %s: %w", id, err)
		}
		read += len(out.Records)
		if len(out.Records) > 0 {
			if err := p.batch(ctx, id, out.Records); err != nil {
				delete(p.iterators, id)
				return read, err
			}
		}
		it = out.NextShardIterator
		p.iterators[id] = it
		if it == nil || len(out.Records) == 0 {
			return read, nil // closed, or nothing more for now
		}
	}
}

// batch delivers the records of one GetRecords: those the filter keeps, as
// one batch, then checkpoints the last of them all.
func (p *Poller) batch(ctx context.Context, shard string, records []types.Record) error {
	var keep []events.DynamoDBEventRecord
	for _, r := range records {
		e, err := eventRecord(r, p.streamARN, p.cfg.Region)
		if err != nil { // unreadable: nothing can apply it
			p.fail(Failure{ShardID: shard, StartSequence: seq(r), EndSeq: seq(r), Records: 1, Condition: "RetryAttemptsExhausted", Err: err})
			continue
		}
		if p.cfg.Filter == nil || p.cfg.Filter(e) {
			keep = append(keep, e)
		}
	}
	switch {
	case len(keep) == 0:
	case p.cfg.Window > 0:
		if err := p.deliverWindowed(ctx, shard, keep); err != nil {
			return err
		}
	default:
		if err := p.deliver(ctx, shard, keep); err != nil {
			return err
		}
	}
	p.applied(shard, seq(records[len(records)-1]))
	return nil
}

// applied checkpoints seq, or, while the shard has a window open, leaves it
// to the window's end.
func (p *Poller) applied(shard, seq string) {
	if w := p.windows[shard]; w != nil {
		w.checkpoint = seq
		return
	}
	p.checkpoints.set(shard, seq)
}

func seq(r types.Record) string {
	if r.Dynamodb == nil {
		return ""
	}
	return aws.ToString(r.Dynamodb.SequenceNumber)
}

// deliver invokes the function with recs until they are applied or given
// up on, checkpointing what was applied.
func (p *Poller) deliver(ctx context.Context, shard string, recs []events.DynamoDBEventRecord) error {
	for attempt := 0; ; attempt++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		from, err := p.invoke(ctx, shard, recs)
		if from < 0 {
			p.applied(shard, recs[len(recs)-1].Change.SequenceNumber)
			return nil
		}
		if from > 0 { // what precedes the lowest failure is done
			p.applied(shard, recs[from-1].Change.SequenceNumber)
			recs = recs[from:]
		}
		if attempt >= p.cfg.MaxRetries {
			p.fail(Failure{ShardID: shard, StartSequence: recs[0].Change.SequenceNumber, EndSeq: recs[len(recs)-1].Change.SequenceNumber,
				Records: len(recs), Condition: "RetryAttemptsExhausted", Err: err})
			p.applied(shard, recs[len(recs)-1].Change.SequenceNumber)
			return nil
		}
		if p.cfg.Bisect && len(recs) > 1 {
			half := len(recs) / 2
			if err := p.deliver(ctx, shard, recs[:half]); err != nil {
				return err
			}
			return p.deliver(ctx, shard, recs[half:])
		}
	}
}

// errFunction marks an invocation that failed as a whole.
var errFunction = errors.New("the function failed")

// invoke sends recs and returns the index of the first record to retry
// (-1: all applied) and, for a failed invocation, its error.
func (p *Poller) invoke(ctx context.Context, shard string, recs []events.DynamoDBEventRecord) (int, error) {
	if p.cfg.Window > 0 {
		resp, err := p.invokeWindow(ctx, shard, recs, false, false)
		if err != nil || len(resp.BatchItemFailures) > 0 {
			return 0, err // the state is kept only from a success: the batch again, whole
		}
		if stateSize(p.windows[shard].state) > MaxWindowState {
			return -1, p.closeWindow(ctx, shard, true)
		}
		return -1, nil
	}
	payload, err := json.Marshal(events.DynamoDBEvent{Records: recs})
	if err != nil {
		return 0, err
	}
	out, err := p.call(ctx, payload, len(recs))
	if err != nil {
		return 0, err
	}
	var resp events.DynamoDBEventResponse
	if len(out) > 0 && string(out) != "null" {
		if err := json.Unmarshal(out, &resp); err != nil {
			return 0, fmt.Errorf("%w: a response that is not a DynamoDBEventResponse: %w", errFunction, err)
		}
	}
	if len(resp.BatchItemFailures) == 0 {
		return -1, nil
	}
	lowest := len(recs)
	for _, f := range resp.BatchItemFailures {
		i := indexOf(recs, f.ItemIdentifier)
		if i < 0 { // empty, or no record of the batch: the whole batch failed
			return 0, nil
		}
		lowest = min(lowest, i)
	}
	return lowest, nil
}

// call invokes the function with payload (n records) under its timeout.
func (p *Poller) call(ctx context.Context, payload []byte, n int) ([]byte, error) {
	p.Invocations++
	p.Delivered += n
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	out, err := p.fn.Invoke(ctx, payload)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errFunction, err)
	}
	return out, nil
}

func indexOf(recs []events.DynamoDBEventRecord, sequence string) int {
	if sequence == "" {
		return -1
	}
	for i, r := range recs {
		if r.Change.SequenceNumber == sequence {
			return i
		}
	}
	return -1
}

func (p *Poller) fail(f Failure) {
	if p.cfg.OnFailure != nil {
		p.cfg.OnFailure(f)
	}
}
