package store

import (
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// This file is the one place that knows the table's key formats
// (docs/table.md#keys). Every function is pure; the ID checks here run
// before any caller-supplied value becomes part of a key, so no input can
// forge a "#"-delimited key.

// Attribute names of the primary key and the two global secondary indexes.
const (
	AttrPK     = "pk"
	AttrSK     = "sk"
	AttrGSI1PK = "gsi1pk"
	AttrGSI1SK = "gsi1sk"
	AttrGSI2PK = "gsi2pk"
	AttrGSI2SK = "gsi2sk"
)

// Index names.
const (
	// GSI1 is overloaded: a user by handle, posts by author, comments by author.
	GSI1 = "GSI1"
	// GSI2 is the reverse follow index: who follows a user.
	GSI2 = "GSI2"
)

const (
	prefixUser      = "USER#"
	prefixPost      = "POST#"
	prefixComment   = "COMMENT#"
	prefixHandle    = "HANDLE#"
	prefixFollows   = "FOLLOWS#"
	prefixFollowers = "FOLLOWERS#"
	prefixFollower  = "FOLLOWER#"
	prefixDraft     = "DRAFT#"
	prefixLike      = "LIKE#"
	prefixLiked     = "LIKED#"

	// SKMetadata is the sort key of a user's or a post's own item. "#" sorts
	// before letters, so it comes first in its partition.
	SKMetadata = "#METADATA"
	// skHandle is the sort key of a handle's uniqueness guard item.
	skHandle = "#HANDLE"
	// SKCount is the sort key of a user's or a post's counter item, which
	// holds its counts apart from its own item: a count changes without
	// rewriting a 20,000-character body. It sorts before SKMetadata, so the
	// two are the first items of their partition, read by one Query.
	SKCount = "#COUNT"
	// SKShard is the sort key of a part counter (lambda/hotkeys: a hot
	// parent's shard's), in the part's partition: its own, so that the
	// projector's filter selects the part counters' records and nothing
	// else.
	SKShard = "#SHARD"
)

// UserPK is the partition of a user and the follows it made: "USER#<id>".
func UserPK(id string) string { return prefixUser + id }

// PostPK is the partition of a post, its counter, its comments and its
// likes (those of a hot post's too, from before it turned hot):
// "POST#<id>".
func PostPK(id string) string { return prefixPost + id }

// CommentSK is a comment's sort key in its post's partition: "COMMENT#<id>".
func CommentSK(id string) string { return prefixComment + id }

// handlePK is the partition of a handle's guard item, and the GSI1 partition
// key that finds a user by handle: "HANDLE#<handle>".
func handlePK(handle string) string { return prefixHandle + handle }

// FollowsSK is a follow's sort key in the follower's partition: "FOLLOWS#<followedId>".
func FollowsSK(followedID string) string { return prefixFollows + followedID }

// FollowersPK is the GSI2 partition of everyone following a user: "FOLLOWERS#<followedId>".
func FollowersPK(followedID string) string { return prefixFollowers + followedID }

// followerSK is a follow's GSI2 sort key: "FOLLOWER#<followerId>".
func followerSK(followerID string) string { return prefixFollower + followerID }

// AuthorPK is the GSI1 partition holding an author's posts and comments: "USER#<id>".
func AuthorPK(authorID string) string { return UserPK(authorID) }

// PublishedSK is a published post's GSI1 sort key under its author:
// "POST#<place>", where place is a ULID of its publication time (its ID, for
// a post published when created, as every post written before drafts was).
func PublishedSK(place string) string { return prefixPost + place }

// draftSK is a draft's GSI1 sort key under its author: "DRAFT#<id>". Drafts
// sort apart from published posts, so each list is one key range.
func draftSK(id string) string { return prefixDraft + id }

// LikeSK is a like's sort key in its post's partition: "LIKE#<likeId>", a
// ULID of its time, so a post's likes sort newest last.
func LikeSK(id string) string { return prefixLike + id }

// LikedSK is the sort key, in the liker's partition, of the guard item that
// makes a user's like of a post unique and finds it again:
// "LIKED#<postId>".
func LikedSK(postID string) string { return prefixLiked + postID }

// Sort-key prefixes for begins_with conditions.
const (
	CommentPrefix = prefixComment
	PostPrefix    = prefixPost
	FollowsPrefix = prefixFollows
	LikePrefix    = prefixLike
	// FollowerPrefix is that of a follow's GSI2 sort key.
	FollowerPrefix = prefixFollower
)

// maxIDLength is the longest ID accepted.
const maxIDLength = 64

// ValidID reports whether id is 1-64 characters of [A-Za-z0-9_-], the only
// IDs allowed into a key.
func ValidID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLength {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '_', c == '-':
		default:
			return false
		}
	}
	return true
}

// HandleRule says in words what ValidHandle checks, for the messages of
// the fields that take a handle.
const HandleRule = "a handle is 3 to 30 characters, each a-z, 0-9 or _"

// ValidHandle reports whether h matches ^[a-z0-9_]{3,30}$ (HandleRule).
func ValidHandle(h string) bool {
	if len(h) < 3 || len(h) > 30 {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// IsLikeSK reports whether sk is a like's sort key in a post's partition or
// a part's (not a marker there: an ID holds no "~" or "!").
func IsLikeSK(sk string) bool {
	id, ok := strings.CutPrefix(sk, prefixLike)
	return ok && ValidID(id)
}

// IsCommentSK reports whether sk is a comment's sort key in a post's
// partition or a part's (not a marker there).
func IsCommentSK(sk string) bool {
	id, ok := strings.CutPrefix(sk, prefixComment)
	return ok && ValidID(id)
}

// Key is an item's primary key.
type Key struct{ PK, SK string }

// Attributes are the key as a request names an item.
func (k Key) Attributes() map[string]types.AttributeValue {
	return map[string]types.AttributeValue{
		AttrPK: &types.AttributeValueMemberS{Value: k.PK},
		AttrSK: &types.AttributeValueMemberS{Value: k.SK},
	}
}

// keyOf is the item's key, false when it has none.
func keyOf(item map[string]types.AttributeValue) (Key, bool) {
	pk, ok1 := item[AttrPK].(*types.AttributeValueMemberS)
	sk, ok2 := item[AttrSK].(*types.AttributeValueMemberS)
	if !ok1 || !ok2 {
		return Key{}, false
	}
	return Key{pk.Value, sk.Value}, true
}

// Item is an item as DynamoDB returns it.
type Item = map[string]types.AttributeValue

// sortKey is the item's sort key ("" when it has none).
func sortKey(item map[string]types.AttributeValue) string { return stringAttr(item, AttrSK) }

// stringAttr is the value of the item's string attribute name ("" when it
// has none, or it is not a string).
func stringAttr(item map[string]types.AttributeValue, name string) string {
	v, _ := item[name].(*types.AttributeValueMemberS)
	if v == nil {
		return ""
	}
	return v.Value
}

func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
