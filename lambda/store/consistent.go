package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

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
