package store

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/internal/ddbjson" // speed-up: ddbjson
)

// The DynamoDB client the store is built on, its settings, a batch's backoff.

// ClientOptions configures a DynamoDB client for the store: at most three
// attempts per request, at most 200 ms apart, each bounded by its context's
// deadline.
func ClientOptions(o *dynamodb.Options) {
	o.Retryer = retry.NewStandard(func(r *retry.StandardOptions) {
		r.MaxAttempts = 3
		r.MaxBackoff = 200 * time.Millisecond
	})
	ddbjson.Install(o) // speed-up: ddbjson
}

// NewClient returns the DynamoDB client of a function: ClientOptions, then
// optFns, and endpoint in place of DynamoDB's own when set (DynamoDB Local,
// which sends no CRC32 header on errors, so checksums are not required).
func NewClient(cfg aws.Config, endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){ClientOptions, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.DisableValidateResponseChecksum = true
		}
	}}, optFns...)...)
}

// Backoff for UnprocessedKeys: full jitter over an exponentially growing
// window, and a ceiling on the total time when the context has no deadline.
const (
	backoffBase     = 20 * time.Millisecond
	backoffCap      = time.Second
	noDeadlineLimit = 20 * time.Second
)

// sleep waits for d or until ctx is done, whichever comes first.
func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// backoff returns a random wait in [0, min(cap, base*2^attempt)).
func backoff(attempt int) time.Duration {
	window := backoffCap
	if attempt < 16 {
		window = min(backoffCap, backoffBase<<attempt)
	}
	return rand.N(window)
}
