package trending

// The aggregator's event source, as the stack deploys it and make dev's
// poller applies it: which of the table's stream records invoke it, how many
// at a time, its tumbling window, and how often a failed batch is tried
// again. With the feed's projector it is the stream's second consumer, the
// most a DynamoDB stream's shard should have.

import (
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Up to StreamBatchSize records an invocation; a failed batch is bisected
// and retried StreamRetries times, then left to the on-failure destination.
// StreamWindow is the tumbling window: a post's counts are written once a
// StreamWindow per stream shard (Lambda allows up to 900 s).
const (
	StreamBatchSize = 1000
	StreamRetries   = 5
	StreamWindow    = 60 * time.Second
)

// Projection is the PROJECTION the projector's code (lambda/cmd/projector)
// runs the aggregator as; Description says what its function does, and
// GaveUp what its on-failure queue's alarm means.
const (
	Projection  = "trending"
	Description = "Counts the likes and comments of Query.trending from the table's stream"
	GaveUp      = "the trending aggregator gave up on stream records: they are in its on-failure queue, and Query.trending misses their likes and comments"
)

// StreamFilters are the event source's filter criteria: a like or a
// comment made or removed, in a post's partition or a shard's (the markers
// among them the aggregator skips). Nothing else invokes it.
var StreamFilters = []map[string]any{
	{"eventName": []any{"INSERT", "REMOVE"}, "dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrSK: map[string]any{"S": []any{map[string]any{"prefix": store.LikePrefix}, map[string]any{"prefix": store.CommentPrefix}}},
	}}},
}

// TableActions are the DynamoDB operations the aggregator performs on the
// table: a shard's progress (GetItem), the buckets' parts and the progress
// it writes (UpdateItem). It reads no index; the stack grants exactly these.
var TableActions = []string{"dynamodb:GetItem", "dynamodb:UpdateItem"}
