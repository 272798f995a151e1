package hotkeys

import (
	"strings"

	"github.com/example/appsync-dynamo/lambda/store"
)

// The hot keys' key formats: the shards' partitions, built on the store's
// (store.PostPK, store.UserPK, store.FollowersPK), and the markers a hot
// parent's partition holds (docs/table.md#keys).

// shardName is shard n's two digits: in its partition key, and its key in a
// hot post's or user's tally map.
func shardName(n int) string { return string(rune('0'+n/10)) + string(rune('0'+n%10)) }

// ShardPK is the partition of shard n of a hot post: "POST#<id>#<nn>",
// where the post's new likes and comments land, with the shard's counter,
// instead of its own partition. An ID holds no "#", so it is no post's
// partition.
func ShardPK(postID string, n int) string { return store.PostPK(postID) + "#" + shardName(n) }

// UserShardPK is the partition of shard n of a hot user: "USER#<id>#<nn>",
// which holds the shard's counter of followers.
func UserShardPK(userID string, n int) string { return store.UserPK(userID) + "#" + shardName(n) }

// FollowersShardPK is the GSI2 partition of shard n of a hot user's
// followers: "FOLLOWERS#<id>#<nn>".
func FollowersShardPK(userID string, n int) string {
	return store.FollowersPK(userID) + "#" + shardName(n)
}

// shardParent returns the partition whose shard pk is ("POST#<id>" of
// "POST#<id>#<nn>", "USER#<id>" of "USER#<id>#<nn>"); false for any other
// key.
func shardParent(pk string) (string, bool) {
	i := strings.LastIndexByte(pk, '#')
	if i < 0 || len(pk)-i != 3 {
		return "", false
	}
	parent, n := pk[:i], pk[i+1:]
	if n[0] < '0' || n[0] > '9' || n[1] < '0' || n[1] > '9' {
		return "", false
	}
	for _, prefix := range []string{store.PostPK(""), store.UserPK("")} {
		if id, ok := strings.CutPrefix(parent, prefix); ok && store.ValidID(id) {
			return parent, true
		}
	}
	return "", false
}

// The markers. "!" sorts before every ID character and "~" after, so a
// Query of a parent's children in its own partition meets one of them
// first (isMarker), in the order it reads.
var (
	// likesMarker, in a hot post's own partition, says its likes are in
	// shards: "LIKE#~" sorts after every like, so a newest-first Query of
	// the likes reads it first. It holds the count of shards, which a
	// deleted post's sweep reads.
	likesMarker = store.LikeSK("~")
	// commentsFirst and commentsLast say a hot post's comments are in
	// shards too, at either end of its comments.
	commentsFirst, commentsLast = store.CommentSK("!"), store.CommentSK("~")
	// followersMarker is the sort key, in a hot user's partition, of the
	// marker that its followers are in shards too. "H" sorts after
	// "FOLLOWS#" and before "LIKED#", outside every range read there; its
	// GSI2 key, FOLLOWERS#<id> / followersMarkerSK, is the first of the
	// user's followers in GSI2.
	followersMarker   = "HOT#FOLLOWERS"
	followersMarkerSK = store.FollowerPrefix + "!"
)

// isMarker reports whether sk is a hot parent's marker in the range of a
// connection under prefix: prefix+"!" sorts before every ID, prefix+"~"
// after.
func isMarker(prefix, sk string) bool { return sk == prefix+"!" || sk == prefix+"~" }
