package feed

import "github.com/example/appsync-dynamo/lambda/store"

// The projection's part of the projector's event source and role, as the
// stack deploys them (infra/apistack/features.go) and make dev's poller
// applies them (local/wired).

// StreamFilters are the records the projection applies, as Lambda's event
// filtering reads them (one pattern per filter; a record matching any is
// delivered): a post's own item, a follow. The rest (comments, likes,
// counters, profiles, the feed's own entries and their TTL deletions) never
// invoke the projector for the feed.
var StreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.PostPK("")}}},
		store.AttrSK: map[string]any{"S": []any{store.SKMetadata}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.UserPK("")}}},
		store.AttrSK: map[string]any{"S": []any{map[string]any{"prefix": store.FollowsPrefix}}},
	}}},
}

// TableActions are the DynamoDB operations the projection performs on the
// table (a post's counter, a follow: GetItem; an author's reach and the
// entries of a reader's feed: Query; the entries and markers it writes and
// deletes: BatchWriteItem; an author's mark and the counters it puts on
// GSI1: UpdateItem), and IndexActions those on its indexes (an author's
// followers on GSI2, posts on GSI1). The stack grants exactly these, with
// the hot keys' tallies' (hotkeys.TableActions);
// TestTheProjectionDoesWhatItsRoleGrants records them.
var (
	TableActions = []string{"dynamodb:BatchWriteItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"}
	IndexActions = []string{"dynamodb:Query"}
)
