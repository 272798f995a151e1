package store

import "context"

// The connections, one access pattern each: a page of one partition's items
// (queryPage; which partition, index, sort-key range and order is said once,
// in query.go); a parent's children, through the store's Spread when it has
// one (spread.go: lambda/hotkeys reads a hot parent's shards too).

// PostsByAuthor returns a page of the author's published posts, newest first
// unless page says otherwise (AP4), or drafts (AP4d): one Query on GSI1, then
// one BatchGetItem of the page's counter items when attrs may name a count.
// Whether the caller may see drafts is the caller's to decide.
func (s *Store) PostsByAuthor(ctx context.Context, authorID string, drafts bool, page PageRequest) (Page[Post], error) {
	status := ""
	if drafts {
		status = "status=" + StatusDraft
	}
	p, err := queryPage[Post](ctx, s, postsByAuthor(authorID, drafts).shaped(page, status), page)
	if err == nil && SelectsCount(page.Attributes, PostCounts) {
		err = s.AddCounters(ctx, "store.User.posts", p.Items)
	}
	return p, err
}

// CommentsOnPost returns a page of the post's comments, oldest first unless
// page says otherwise (AP5): one Query on the post's partition (or, a hot
// post's, on it and CommentShards of its shards: lambda/hotkeys), a first
// page of which a layer may keep (lambda/hotpage).
func (s *Store) CommentsOnPost(ctx context.Context, postID string, page PageRequest) (Page[Comment], error) {
	return children[Comment](ctx, s, commentsOnPost(postID).shaped(page, ""), page)
}

// CommentsByAuthor returns a page of the author's comments, newest first
// unless page says otherwise (AP6): one Query on GSI1.
func (s *Store) CommentsByAuthor(ctx context.Context, authorID string, page PageRequest) (Page[Comment], error) {
	return queryPage[Comment](ctx, s, commentsByAuthor(authorID).shaped(page, ""), page)
}

// Following returns a page of the follows the user made, ordered by the
// followed user's ID (AP7): one Query on the user's partition.
func (s *Store) Following(ctx context.Context, userID string, page PageRequest) (Page[Follow], error) {
	return queryPage[Follow](ctx, s, following(userID), page)
}

// Likes returns a page of the post's likes, newest first: one Query on the
// post's partition (or, a hot post's, on it and its shards: lambda/hotkeys).
func (s *Store) Likes(ctx context.Context, postID string, page PageRequest) (Page[Like], error) {
	return children[Like](ctx, s, likesOnPost(postID).shaped(page, ""), page)
}

// Followers returns a page of the users following userID, ordered by
// follower ID (AP8): one Query on GSI2, or (a hot user's) on its GSI2
// partition and its shards': lambda/hotkeys).
func (s *Store) Followers(ctx context.Context, userID string, page PageRequest) (Page[Follow], error) {
	return children[Follow](ctx, s, followers(userID), page)
}
