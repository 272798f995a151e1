package store

import (
	"slices"
)

// A parent's counts in parts: each part counter (SKShard, a hot parent's
// shard's) counts its own children (likes, comments or followers, with a
// version), and the projector copies them, with the version read, onto the
// parent's counter (lambda/hotkeys: Tallies), under "hot", so that a read
// of the parent's counts reads its counter alone and adds them up.

// ShardTally is a part's counts as the projector copies them onto the
// parent's counter, with the part counter's version they were read at.
type ShardTally struct {
	Likes     int   `dynamodbav:"l"`
	Comments  int   `dynamodbav:"c"`
	Followers int   `dynamodbav:"f,omitempty"` // a hot user's
	Version   int64 `dynamodbav:"v"`
}

// CountedAttrs adds to attrs, a projection, the attributes a hot post's or
// user's counter holds its shards' counts in, when attrs reads counts.
func CountedAttrs(attrs []string) []string {
	if attrs == nil || !SelectsCount(attrs, PostCounts) && !SelectsCount(attrs, UserCounts) {
		return attrs
	}
	return append(slices.Clone(attrs), "shards", "hot")
}
