package store

// Names the package's own tests read that are not its API.
var (
	HandlePK   = handlePK
	FollowerSK = followerSK
	DraftSK    = draftSK
)

const (
	SKHandle     = skHandle
	DraftPrefix  = prefixDraft
	DefaultOrder = defaultOrder
)
