package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// Loading a data set as it is (the sample data, tests): BatchWriteItem of
// 25 items, several requests at a time.

// Dataset is a set of entities to load as they are, counts included.
type Dataset struct {
	Users    []User
	Posts    []Post
	Comments []Comment
	Follows  []Follow
	Likes    []Like
	// Items are written as they are (marshalled with attributevalue): a
	// feature's own, such as the feed's entries (feed.Entry.Item).
	Items []any
}

// Load writes every entity of d, with its counter and handle items, by
// BatchWriteItem. It seeds a table: it checks nothing and counts nothing,
// so d's counts must equal its children already.
func (s *Store) Load(ctx context.Context, d Dataset) error {
	const op = "store.Load"
	var items []any
	for _, u := range d.Users {
		items = append(items, newUserItem(u), newUserCounter(u), newHandleItem(u))
	}
	for _, p := range d.Posts {
		items = append(items, newPostItem(p), newPostCounter(p))
	}
	for _, c := range d.Comments {
		items = append(items, newCommentItem(c))
	}
	for _, f := range d.Follows {
		items = append(items, newFollowItem(f))
	}
	for _, l := range d.Likes {
		items = append(items, newLikeItem(l), newLikedItem(l))
	}
	items = append(items, d.Items...)
	writes := make([]types.WriteRequest, len(items))
	for i, it := range items {
		av, err := marshal(op, it)
		if err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.BatchWrite(ctx, op, writes)
}
