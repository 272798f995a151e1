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

// StreamFilters are the event source's filter criteria, as Lambda's event
// filtering reads them (one pattern per filter; a record matching any is
// delivered): a post's own item, a follow, and a hot post's or user's shard
// counter. The rest (comments, likes, counters, profiles, the feed's own
// entries and their TTL deletions) never invoke the projector.
var StreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.PostPK("")}}},
		store.AttrSK: map[string]any{"S": []any{store.SKMetadata}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.UserPK("")}}},
		store.AttrSK: map[string]any{"S": []any{map[string]any{"prefix": store.FollowsPrefix}}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{ // a hot post's or user's shard counter: its counts to copy (store's hot.go)
		store.AttrSK: map[string]any{"S": []any{store.SKShard}},
	}}},
}
