package trending

import (
	"strconv"
	"strings"
	"time"
)

// The trending feature's key formats: its buckets' parts and each stream
// shard's progress, in partitions of their own ("TREND#..."), beside the
// core's (lambda/store/keys.go).

const prefix = "TREND#"

// bucketPK is the partition of one part of a bucket: the likes and
// comments made in the span of the given length that starts at start, on
// the posts whose IDs hash to part (partOf): "TREND#<span>#<start in Unix
// seconds>#<part>". Its one item's sort key is trendSK.
func bucketPK(span time.Duration, start time.Time, part int) string {
	return prefix + span.String() + "#" + strconv.FormatInt(start.Unix(), 10) + "#" + strconv.Itoa(part)
}

// trendSK is the sort key of a bucket's part (bucketPK) and of a stream shard's
// progress (progressPK).
const trendSK = "#TREND"

// progressPK is the partition of the aggregator's progress on one stream
// shard: the last sequence number it has counted there (under trendSK), and the
// flushes it began (flushSK).
func progressPK(shardID string) string { return prefix + "SHARD#" + shardID }

// flushSK is the sort key, in a shard's progress partition, of the counts
// of the flush whose first record has the padded sequence number first:
// "FLUSH#<first>".
func flushSK(first string) string { return "FLUSH#" + first }

// partOf returns the part of a bucket that counts postID, of parts: FNV-1a
// of the ID.
func partOf(postID string, parts int) int {
	h := uint32(2166136261)
	for i := 0; i < len(postID); i++ {
		h = (h ^ uint32(postID[i])) * 16777619
	}
	return int(h % uint32(parts))
}

// Attribute names in a bucket's part: a post's likes and comments in the
// bucket, and the mark of the last flush applied from each stream shard.
func likesAttr(postID string) string    { return "l_" + postID }
func commentsAttr(postID string) string { return "c_" + postID }
func markAttr(shardID string) string    { return "w_" + shardID }

// PadSequence returns a stream sequence number (decimal digits, of varying
// length) zero-padded to 40 digits, so that two compare as strings as they
// do as numbers.
func PadSequence(seq string) string {
	return strings.Repeat("0", max(40-len(seq), 0)) + seq
}
