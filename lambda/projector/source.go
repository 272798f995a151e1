package projector

// The projector's event source, as the stack deploys it and make dev's
// poller applies it: which of the table's stream records invoke it, how many
// at a time, and how often a failed batch is tried again.

import "github.com/example/appsync-dynamo/lambda/store"

// Up to StreamBatchSize records an invocation; a failed batch is bisected
// and retried StreamRetries times, then left to the on-failure destination.
const (
	StreamBatchSize = 100
	StreamRetries   = 5
)

// StreamFilters are the projector's own filter criteria, as Lambda's event
// filtering reads them: a hot post's or user's shard counter, its counts to
// copy (store's hot.go). The event source's filters are its projections'
// (feed.StreamFilters), then these; no other record invokes it.
var StreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrSK: map[string]any{"S": []any{store.SKShard}},
	}}},
}
