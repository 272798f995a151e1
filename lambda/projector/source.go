package projector

// The projector's event source, as the stack deploys it and make dev's
// poller applies it: how many of the table's stream records an invocation
// gets, and how often a failed batch is tried again. Which records invoke
// it are its projections' filters (hotkeys.StreamFilters,
// feed.StreamFilters).

// Up to StreamBatchSize records an invocation; a failed batch is bisected
// and retried StreamRetries times, then left to the on-failure destination.
const (
	StreamBatchSize = 100
	StreamRetries   = 5
)
