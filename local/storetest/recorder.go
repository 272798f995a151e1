package storetest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
)

// Recorder is a DynamoDB client that records the IAM action of each
// request, by where it went ("table dynamodb:Query", "index
// dynamodb:Query"), and can fail the next UpdateItem calls as DynamoDB
// throttling them would. It is safe for concurrent use.
type Recorder struct {
	*dynamodb.Client
	mu          sync.Mutex
	actions     map[string]bool
	failUpdates int
}

// NewRecorder records the requests sent through client.
func NewRecorder(client *dynamodb.Client) *Recorder {
	return &Recorder{Client: client, actions: map[string]bool{}}
}

// Actions are the actions recorded so far, sorted.
func (r *Recorder) Actions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(maps.Keys(r.actions))
}

// FailUpdates makes the next n UpdateItem calls fail (ThrottlingException).
func (r *Recorder) FailUpdates(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failUpdates = n
}

// UpdatesToFail is how many of the UpdateItem calls FailUpdates asked to
// fail have not been made yet.
func (r *Recorder) UpdatesToFail() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failUpdates
}

func (r *Recorder) record(action, index string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	where := "table"
	if index != "" {
		where = "index"
	}
	r.actions[where+" dynamodb:"+action] = true
}

func (r *Recorder) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.record("GetItem", "")
	return r.Client.GetItem(ctx, in, opts...)
}

func (r *Recorder) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.record("Query", aws.ToString(in.IndexName))
	return r.Client.Query(ctx, in, opts...)
}

func (r *Recorder) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.record("BatchGetItem", "")
	return r.Client.BatchGetItem(ctx, in, opts...)
}

func (r *Recorder) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error) {
	r.record("BatchWriteItem", "")
	return r.Client.BatchWriteItem(ctx, in, opts...)
}

func (r *Recorder) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	r.record("UpdateItem", "")
	r.mu.Lock()
	fail := r.failUpdates > 0
	if fail {
		r.failUpdates--
	}
	r.mu.Unlock()
	if fail {
		return nil, &smithy.GenericAPIError{Code: "ThrottlingException", Message: "injected"}
	}
	return r.Client.UpdateItem(ctx, in, opts...)
}

func (r *Recorder) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	r.record("TransactWriteItems", "")
	return r.Client.TransactWriteItems(ctx, in, opts...)
}
