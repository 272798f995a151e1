package store

import (
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// ClientOptions configures a DynamoDB client for the store: at most three
// attempts per request, backing off at most 200 ms between them, so that
// retries fit inside an invocation; each request is further bounded by its
// context's deadline (the handler's, a margin before Lambda's).
func ClientOptions(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(r *retry.StandardOptions) {
		r.MaxAttempts = 3
		r.MaxBackoff = 200 * time.Millisecond
	})
}
