// Package feedtest builds feeds into a data set for tests, as the
// projection would write them, without a stream.
package feedtest

import (
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
)

// FollowWithFeed makes reader follow author in d (the counts kept) and gives
// reader's feed the entries the projection would write for author's posts,
// expiring at expires (seconds since the epoch).
func FollowWithFeed(d *store.Dataset, reader, author string, expires int64) {
	sample.Follow(d, reader, author)
	for _, p := range d.Posts {
		if p.AuthorID == author && p.Published() {
			d.Items = append(d.Items, feed.Entry{Reader: reader, Place: store.PublishedSK(p.ID), PostID: p.ID, AuthorID: author, Expires: expires}.Item())
		}
	}
}
