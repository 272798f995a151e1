// Package store reads and writes the application's single DynamoDB table:
// the key formats (keys.go), items and entities (model.go) and every
// DynamoDB call. Its errors carry an errs.Kind; each exported read documents
// the requests it costs, and none scans.
package store

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// API is the part of the DynamoDB client the store calls.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Store is the table. It is safe for concurrent use.
type Store struct {
	api    API
	table  string
	tokens *cursor.Codec
	now    func() time.Time
	newID  func(time.Time) string
	spread Spread // where some parents' children are besides their partition (lists.go)
}

// Option configures a Store.
type Option func(*Store)

// WithClock makes the store read the time from now (tests use a fixed clock).
func WithClock(now func() time.Time) Option { return func(s *Store) { s.now = now } }

// WithIDs makes the store take new post and comment IDs from newID, given
// the creation time (tests use a deterministic sequence).
func WithIDs(newID func(time.Time) string) Option { return func(s *Store) { s.newID = newID } }

// New returns a Store for the table named table, signing pagination tokens
// with tokens. New post and comment IDs are ULIDs: time-ordered, so sort keys
// sort by creation.
func New(api API, table string, tokens *cursor.Codec, opts ...Option) *Store {
	s := &Store{api: reads{api}, table: table, tokens: tokens, now: time.Now, newID: NewULID}
	for _, o := range opts {
		o(s)
	}
	return s
}

// NewULID returns a new ULID for time t, from a cryptographically random source.
func NewULID(t time.Time) string {
	return ulid.MustNew(ulid.Timestamp(t), rand.Reader).String()
}

// timestamp formats t as an AWSDateTime with milliseconds, in UTC.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// API returns the client the store calls DynamoDB through, for a feature's
// own items (lambda/trending's buckets): its errors go through Fail.
func (s *Store) API() API { return s.api }

// Now is the store's clock (WithClock).
func (s *Store) Now() time.Time { return s.now() }

// throttlingCodes are the DynamoDB error codes that mean "slow down".
var throttlingCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

// Fail converts an error of a DynamoDB call made for op into an errs.Error
// of the right kind. A request still unanswered at the invocation's
// deadline, a throttled one and one that could not be sent are Throttled
// (the client may retry); anything else is Internal, its cause logged.
func Fail(op string, err error) error {
	if errors.Is(err, context.DeadlineExceeded) {
		return errs.Wrap(op, errs.Throttled, "DynamoDB did not answer in time; retry later", err)
	}
	var api smithy.APIError
	if errors.As(err, &api) && throttlingCodes[api.ErrorCode()] {
		return errs.Wrap(op, errs.Throttled, "DynamoDB is throttling requests; retry later", err)
	}
	// Not reached at all (refused, reset, unresolvable), after the SDK's
	// retries: an outage, which a read and a write report alike.
	var send *smithyhttp.RequestSendError
	if errors.As(err, &send) {
		return errs.Wrap(op, errs.Throttled, "DynamoDB could not be reached; retry later", err)
	}
	return errs.Wrap(op, errs.Internal, "internal error", err)
}

// CheckIDs returns a Validation error naming the first invalid ID.
func CheckIDs(op string, ids ...string) error {
	for _, id := range ids {
		if !ValidID(id) {
			return errs.E(op, errs.Validation, "invalid ID: must be 1-64 characters of A-Z, a-z, 0-9, _ and -")
		}
	}
	return nil
}

// Strongly consistent reads, for what a mutation answers right after its
// write: an eventually consistent read may not see it yet.

type consistentKey struct{}

// WithConsistentReads returns ctx under which every read of the table is
// strongly consistent (a mutation's selection must see what it wrote). A
// Query of an index stays eventually consistent.
func WithConsistentReads(ctx context.Context) context.Context {
	return context.WithValue(ctx, consistentKey{}, true)
}

// ConsistentReads reports whether ctx asks for strongly consistent reads
// (WithConsistentReads).
func ConsistentReads(ctx context.Context) bool { v, _ := ctx.Value(consistentKey{}).(bool); return v }

// reads is the store's API, with WithConsistentReads applied to every read.
type reads struct{ API }

func (r reads) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if ConsistentReads(ctx) {
		in.ConsistentRead = aws.Bool(true)
	}
	return r.API.GetItem(ctx, in, opts...)
}

func (r reads) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if ConsistentReads(ctx) && in.IndexName == nil {
		in.ConsistentRead = aws.Bool(true)
	}
	return r.API.Query(ctx, in, opts...)
}

func (r reads) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	if ConsistentReads(ctx) {
		for table, ka := range in.RequestItems {
			ka.ConsistentRead = aws.Bool(true)
			in.RequestItems[table] = ka
		}
	}
	return r.API.BatchGetItem(ctx, in, opts...)
}

// What the writes share (users.go, posts.go, comments.go, follows.go,
// likes.go). Each is atomic: one conditional UpdateItem, or one
// TransactWriteItems that writes a child and adjusts its parent's count, on
// the parent's counter item, together (see transact and counts.go).
// Ownership is a condition of the write itself; a write that reads first
// (to find its item's partition, or to return what it removes) is
// conditioned on what it read. Their errors: Validation (an ID or handle
// that may not go into a key), NotFound, Unauthorized (not the owner),
// Conflict, Throttled, Internal.

func marshal(op string, v any) (map[string]types.AttributeValue, error) {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return av, nil
}

func unmarshal(op string, item map[string]types.AttributeValue, v any) error {
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return nil
}

const (
	countUp   = 1
	countDown = -1
)

// GetConsistent reads one item with a strongly consistent GetItem into v and
// reports whether it exists.
func (s *Store) GetConsistent(ctx context.Context, op string, key Key, v any) (bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key.Attributes(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, Fail(op, err)
	}
	if out.Item == nil {
		return false, nil
	}
	return true, unmarshal(op, out.Item, v)
}

// The kinds of children, by the connection that lists them.
const (
	KindLikes     = "Post.likes"
	KindComments  = "Post.comments"
	KindFollowers = "User.followers"
)

// Place is where a parent's child is written and counted: the parent's
// partition and counter (the zero Place), or a Spread's Partition and the
// part counter of Counter. ID, when set, is the child's ID as written.
type Place struct {
	Partition, Counter, ID string
}

// Spread is a layer under the access patterns that keeps some parents'
// children in other partitions too, counted on part counters there
// (lambda/hotkeys). A store without one keeps every child in its parent's
// partition and never asks.
type Spread interface {
	// Page reads a page of c in its order, from the partitions the
	// children are in (Children.Own alone for a parent not spread).
	Page(ctx context.Context, c Children, page PageRequest) (Page[Item], error)
	// All hands each child of c to each, from every partition the children
	// are in, until each returns false.
	All(ctx context.Context, c Children, each func(Item) bool) error
	// Add writes a new child of kind under parent (its ID id) with write,
	// at the place it chooses: the zero Place (under Guard's condition)
	// while the parent is not spread. missing is the error of a parent
	// that is absent.
	Add(ctx context.Context, kind, parent, id string, missing error, write func(context.Context, Place) error) error
	// Guard is the condition a child's write at the zero Place puts on the
	// parent's counter (refused when the parent is spread, or should be),
	// and failed wrapped to report that refusal to Add.
	Guard(kind string, failed func(old Item) error) (expression.ConditionBuilder, func(old Item) error)
	// Locate is the place of an existing child of kind that is not in its
	// parent's partition: by its ID (a comment) or the partition its item
	// names (a like's, a follow's GSI2 partition).
	Locate(kind, parent, id, partition string) Place
	// Wrote is told that a child was removed at place (not the zero
	// Place); Add sees its own writes.
	Wrote(ctx context.Context, place Place)
	// Grew is told the count of a parent's children after a write of one.
	Grew(ctx context.Context, kind, parent string, count int)
	// Tallies are the part counts to add to a parent's counter read from
	// the partition pk, given those the counter holds (as last added onto
	// it).
	Tallies(pk string, tallies map[string]ShardTally) map[string]ShardTally
	// Learn is told that the counter of partition pk says its parent's
	// children are in shards parts (0: none).
	Learn(pk string, shards int)
	// Counter is the counter item of the partition pk as the Spread keeps
	// it for a parent whose counter many writes change (kept false: read it).
	Counter(ctx context.Context, op, pk string) (counter Item, found, kept bool, err error)
	// Parts are the partitions besides its own that a parent's children
	// are in, from its counter's shards (-1: unknown, its counter gone).
	Parts(ctx context.Context, pk string, shards int) ([]string, error)
}

// Children is a connection of one parent's children, as a Spread reads it.
type Children struct {
	s     *Store
	q     partitionQuery
	attrs []string // what All reads of each child (nil: all of it)
}

// partitionQuery is a Query over one partition of the table or an index,
// optionally narrowed to sort keys starting with a prefix, and within it to
// an inclusive range of sort keys.
type partitionQuery struct {
	scope       cursor.Scope // binds the query's tokens; Scope.Index names the index
	pk          string       // partition key value
	skPrefix    string       // begins_with condition on the sort key; "" for none
	lo, hi      string       // BETWEEN condition on the sort key (both set, or neither)
	newestFirst bool         // ScanIndexForward=false
}
