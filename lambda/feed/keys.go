package feed

import (
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/store"
)

// The feed's key formats (docs/table.md, "The feed"): its items are the
// readers' entries and pull markers, in a partition per reader, and the
// counters of a high-follower author's posts put on GSI1 beside them. The
// core's keys (a post's, a user's, a follow's) are store's.

const (
	prefixFeed    = "FEED#"
	prefixPull    = "#PULL#"
	prefixCounted = "COUNT#"
)

// PK is the partition of a reader's feed: "FEED#<readerId>". An entry's
// sort key is its post's GSI1 sort key (store.PublishedSK: "POST#<ULID of
// its publication>"), so a feed lists newest first, and an entry is found
// again from its post.
func PK(readerID string) string { return prefixFeed + readerID }

// PullSK is the sort key, in a reader's feed, of the marker that the reader
// follows an author whose posts the feed reads at read time (a
// high-follower author, not fanned out): "#PULL#<authorId>". It sorts
// before the entries.
func PullSK(authorID string) string { return prefixPull + authorID }

// CountedSK is the GSI1 sort key, under its author (store.AuthorPK), of the
// counter item of a published post by a high-follower author:
// "COUNT#<ULID of its place>", so the counters sort like their posts, in a
// range of their own. Only the projector writes it (IndexCounters): the
// counters of other posts carry no GSI1 key, and their comments and likes
// write no index.
func CountedSK(place string) string {
	return prefixCounted + strings.TrimPrefix(place, store.PostPrefix)
}

// placesSince returns the inclusive bounds of the places (GSI1 sort keys)
// of the posts published strictly after since: their ULIDs' first ten
// characters are their millisecond time, in an alphabet that sorts as the
// times do, and "~" sorts after every ID character.
func placesSince(since time.Time) (lo, hi string) {
	var id ulid.ULID
	first := "~~~~~~~~~~" // past ULID's range: after every ID
	if id.SetTime(ulid.Timestamp(since.Truncate(time.Millisecond).Add(time.Millisecond))) == nil {
		first = id.String()[:10]
	}
	return store.PublishedSK(first), store.PublishedSK("~")
}
