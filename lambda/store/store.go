// Package store reads and writes the application's single DynamoDB table.
//
// It owns the key formats (keys.go), the mapping between items and entities
// (model.go) and every DynamoDB call. Its errors carry an errs.Kind: NotFound
// for a required item that is absent, Validation for an ID that may not go
// into a key, InvalidNextToken for a bad pagination token, Throttled when
// DynamoDB sheds load, Internal for everything else.
//
// Each exported read documents the DynamoDB requests it costs. None of them
// scans.
package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// API is the part of the DynamoDB client the store calls.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchWriteItemOutput, error)
}

var _ API = (*dynamodb.Client)(nil)

// Store is the table. It is safe for concurrent use.
type Store struct {
	api    API
	table  string
	tokens *cursor.Codec
}

// New returns a Store for the table named table, signing pagination tokens
// with tokens.
func New(api API, table string, tokens *cursor.Codec) *Store {
	return &Store{api: api, table: table, tokens: tokens}
}

// Table returns the table's name.
func (s *Store) Table() string { return s.table }

// throttlingCodes are the DynamoDB error codes that mean "slow down".
var throttlingCodes = map[string]bool{
	"ProvisionedThroughputExceededException": true,
	"ThrottlingException":                    true,
	"RequestLimitExceeded":                   true,
}

// fail converts an SDK error into an errs.Error of the right kind.
func fail(op string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) && throttlingCodes[api.ErrorCode()] {
		return errs.Wrap(op, errs.Throttled, "DynamoDB is throttling requests; retry later", err)
	}
	return errs.Wrap(op, errs.Internal, "internal error", err)
}

// checkIDs returns a Validation error naming the first invalid ID.
func checkIDs(op string, ids ...string) error {
	for _, id := range ids {
		if !ValidID(id) {
			return errs.E(op, errs.Validation, "invalid ID: must be 1-64 characters of A-Z, a-z, 0-9, _ and -")
		}
	}
	return nil
}
