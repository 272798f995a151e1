package hotkeys

import "github.com/example/appsync-dynamo/lambda/store"

// StreamFilters are the records Tallies applies, as Lambda's event
// filtering reads them: a hot post's or user's shard counter, its counts to
// copy (writes.go). The projector's event source includes them.
var StreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrSK: map[string]any{"S": []any{store.SKShard}},
	}}},
}

// TableActions are the DynamoDB operations Tallies performs on the table
// (UpdateItem), which the stack grants the projector.
var TableActions = []string{"dynamodb:UpdateItem"}
