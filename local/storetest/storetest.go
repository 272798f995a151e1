// Package storetest gives tests a real DynamoDB: DynamoDB Local, started once
// per test binary (or reused from $DYNAMODB_LOCAL_ENDPOINT), and a freshly
// created table with the production schema for each test.
//
// A test that needs DynamoDB Local is skipped under -short (make check) and
// nowhere else: without -short it fails, saying how to
// install it, when it cannot be started.
package storetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/hotkeys" // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
)

// EnvEndpoint names the variable that points tests at a running DynamoDB Local.
const EnvEndpoint = "DYNAMODB_LOCAL_ENDPOINT"

// TokenKey signs pagination tokens in tests, so golden outputs are stable.
var TokenKey = []byte("test-next-token-key")

var (
	startOnce sync.Once
	endpoint  string
	startErr  error
	tableSeq  atomic.Int64
)

// Endpoint returns the URL of a DynamoDB Local shared by the whole test
// binary, starting it on first use. The server exits with the test binary.
func Endpoint(tb testing.TB) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs DynamoDB Local, which make test starts: skipped under -short (make check)")
	}
	startOnce.Do(func() {
		if endpoint = os.Getenv(EnvEndpoint); endpoint != "" {
			return
		}
		srv, err := ddblocal.StartInstalled(context.Background())
		if err != nil {
			startErr = err
			return
		}
		endpoint = srv.Endpoint
	})
	if startErr != nil {
		tb.Fatalf("DynamoDB Local: %v", startErr)
	}
	return endpoint
}

// Client returns a DynamoDB client for the shared DynamoDB Local, with the
// cost middleware installed, so tests can count requests with cost.WithMeter.
func Client(tb testing.TB, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	tb.Helper()
	return ddblocal.Client(Endpoint(tb), optFns...)
}

// NewTable creates a uniquely named table with the production schema,
// without its stream (nothing reads it in most tests, and on DynamoDB Local
// it about doubles the time of every write), and deletes it when the test
// ends. It returns the table's name.
func NewTable(tb testing.TB, client *dynamodb.Client) string {
	return newTable(tb, client, ddblocal.WithoutStream(store.Schema))
}

// NewStreamTable is NewTable with the table's stream, as the stack deploys it.
func NewStreamTable(tb testing.TB, client *dynamodb.Client) string {
	return newTable(tb, client, store.Schema)
}

func newTable(tb testing.TB, client *dynamodb.Client, schema store.TableSchema) string {
	tb.Helper()
	name := fmt.Sprintf("test-%s-%d-%d", sanitize(tb.Name()), os.Getpid(), tableSeq.Add(1))
	if len(name) > 255 {
		name = name[len(name)-255:]
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := client.CreateTable(ctx, ddblocal.CreateTableInput(schema, name)); err != nil {
		tb.Fatalf("create table %s: %v", name, err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := client.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String(name)}); err != nil {
			tb.Errorf("delete table %s: %v", name, err)
		}
	})
	return name
}

// NewStore returns a Store on a new table (NewTable) loaded with data (which
// may be empty), and the client.
func NewStore(tb testing.TB, data store.Dataset, opts ...store.Option) (*store.Store, *dynamodb.Client) {
	tb.Helper()
	client := Client(tb)
	return load(tb, client, NewTable(tb, client), data, opts), client
}

// NewStreamStore is NewStore on a table with its stream (NewStreamTable).
func NewStreamStore(tb testing.TB, data store.Dataset, opts ...store.Option) (*store.Store, *dynamodb.Client) {
	tb.Helper()
	client := Client(tb)
	return load(tb, client, NewStreamTable(tb, client), data, opts), client
}

// Wired are the options the optional features wired in give a store, as
// the functions make it: a test of a feature, or of what the API does with
// them all, passes them (the stores here are the core's, without them).
var Wired = []store.Option{
	hotkeys.Spread, // feature: hotkeys
}

// New returns a store of the table on api with opts, its tokens signed
// with TokenKey.
func New(api store.API, table string, opts ...store.Option) *store.Store {
	return store.New(api, table, cursor.New(TokenKey), opts...)
}

// MakeHot turns the post hot (its likes and comments in shards) where the
// store's Spread can (hot keys: lambda/hotkeys), so that a test of what
// reads a post's likes and comments meets a hot one too. Without one it
// leaves the post as it is.
func MakeHot(ctx context.Context, s *store.Store, postID string) error {
	if h, ok := s.Spread().(interface {
		MakeHot(ctx context.Context, postID string) error
	}); ok {
		return h.MakeHot(ctx, postID)
	}
	return nil
}

// StoreOn returns another store of the table, as another Lambda instance
// has: it shares nothing with the others but the table.
func StoreOn(tb testing.TB, table string, opts ...store.Option) (*store.Store, *dynamodb.Client) {
	tb.Helper()
	client := Client(tb)
	return New(client, table, opts...), client
}

func load(tb testing.TB, client *dynamodb.Client, table string, data store.Dataset, opts []store.Option) *store.Store {
	tb.Helper()
	s := New(client, table, opts...)
	if err := s.Load(context.Background(), data); err != nil {
		tb.Fatalf("load data: %v", err)
	}
	return s
}

// Deterministic returns store options for reproducible writes: the clock
// reads start and advances a second per call, and new IDs are ULIDs of that
// time with zero entropy.
func Deterministic(start time.Time) []store.Option {
	var mu sync.Mutex
	now := start
	return []store.Option{
		store.WithClock(func() time.Time {
			mu.Lock()
			defer mu.Unlock()
			t := now
			now = now.Add(time.Second)
			return t
		}),
		store.WithIDs(func(t time.Time) string { return ulid.MustNew(ulid.Timestamp(t), zeroReader{}).String() }),
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '-', r == '_', r == '.':
			return r
		}
		return '_'
	}, name)
}

// Count returns how many items of table match a key condition: pkAttr = pk
// and, unless prefix is "", begins_with(skAttr, prefix), on the table
// (consistently) or on index. Tests check counters against it.
func Count(t testing.TB, c *dynamodb.Client, table, index, pkAttr, pk, skAttr, prefix string) int {
	t.Helper()
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(table),
		KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :sk)"),
		ExpressionAttributeNames:  map[string]string{"#pk": pkAttr, "#sk": skAttr},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: pk}, ":sk": &types.AttributeValueMemberS{Value: prefix}},
		Select:                    types.SelectCount,
	}
	if prefix == "" {
		in.KeyConditionExpression = aws.String("#pk = :pk")
		delete(in.ExpressionAttributeNames, "#sk")
		delete(in.ExpressionAttributeValues, ":sk")
	}
	if index != "" {
		in.IndexName = aws.String(index)
	} else {
		in.ConsistentRead = aws.Bool(true)
	}
	total := 0
	for {
		out, err := c.Query(t.Context(), in)
		if err != nil {
			t.Fatal(err)
		}
		total += int(out.Count)
		if len(out.LastEvaluatedKey) == 0 {
			return total
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Pages follows a connection from req to its last page (read, page after
// page, with each page's nextToken), failing the test on an error or past
// 1,000 pages, and returns the ID (id) of every item, in order, and the
// number of pages read.
func Pages[T any](t testing.TB, read func(store.PageRequest) (store.Page[T], error), req store.PageRequest, id func(T) string) (ids []string, pages int) {
	t.Helper()
	for pages < 1000 {
		page, err := read(req)
		if err != nil {
			t.Fatalf("page %d, after %d items: %v", pages+1, len(ids), err)
		}
		pages++
		for _, item := range page.Items {
			ids = append(ids, id(item))
		}
		if page.NextToken == nil {
			return ids, pages
		}
		req.NextToken = *page.NextToken
	}
	t.Fatal("no last page after 1,000 pages")
	return nil, 0
}

// IDs is Pages' IDs.
func IDs[T any](t testing.TB, read func(store.PageRequest) (store.Page[T], error), req store.PageRequest, id func(T) string) []string {
	t.Helper()
	ids, _ := Pages(t, read, req, id)
	return ids
}
