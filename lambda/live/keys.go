package live

// The live feature's key format (docs/table.md, "Live updates"): one item a
// published post, how far its publication to its author's followers has
// gone, in a partition of its own. The core's keys (a post's, a follow's)
// are store's.

const (
	prefixPushed = "PUSHED#"
	skPushed     = "#FEED"
)

// pushedPK is the partition of the marker of a post's feed publication:
// "PUSHED#<postId>"; its sort key is "#FEED".
func pushedPK(postID string) string { return prefixPushed + postID }
