package store

import "cmp"

// The items as the table holds them: each entity with its key attributes
// (keys.go), the counter items that hold the counts, and how an item's
// counts are added to its entity.

// likeItem is a like in its post's partition; likedItem is its guard in the
// liker's partition, which makes a user's like of a post unique, finds it
// again to undo it, and answers Post.likedByMe.
type (
	likeItem struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
		Like
	}
	likedItem struct {
		PK string `dynamodbav:"pk"`
		SK string `dynamodbav:"sk"`
		Like
	}
)

func newLikeItem(l Like) likeItem {
	pk := cmp.Or(l.Partition, PostPK(l.PostID))
	l.Partition = ""
	return likeItem{PK: pk, SK: LikeSK(l.ID), Like: l}
}

func newLikedItem(l Like) likedItem {
	return likedItem{PK: UserPK(l.UserID), SK: LikedSK(l.PostID), Like: l}
}

type userItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	User
}

type handleItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	UserID string `dynamodbav:"userId"`
}

type postItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	Post
}

type commentItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI1PK string `dynamodbav:"gsi1pk"`
	GSI1SK string `dynamodbav:"gsi1sk"`
	Comment
}

type followItem struct {
	PK     string `dynamodbav:"pk"`
	SK     string `dynamodbav:"sk"`
	GSI2PK string `dynamodbav:"gsi2pk"`
	GSI2SK string `dynamodbav:"gsi2sk"`
	// Version tells this follow from one made again after an unfollow (a
	// ULID of its time): an unfollow removes the follow it read, never a
	// newer one. Follows written before it have none.
	Version string `dynamodbav:"v,omitempty"`
	Follow
}

// userCounterItem holds a user's counts. It exists exactly when the profile
// does, so writes check the user on it rather than on the larger profile;
// GSI1 holds it under the handle, before the profile, so that one Query by
// handle reads both.
type userCounterItem struct {
	PK             string `dynamodbav:"pk"`
	SK             string `dynamodbav:"sk"`
	GSI1PK         string `dynamodbav:"gsi1pk"`
	GSI1SK         string `dynamodbav:"gsi1sk"`
	PostCount      int    `dynamodbav:"postCount"`
	FollowerCount  int    `dynamodbav:"followerCount"`
	FollowingCount int    `dynamodbav:"followingCount"`
}

// postCounterItem holds a post's counts and what the writes that count
// check: its author and its status, kept equal to the post's own by the
// writes that change them. It exists exactly when the post does.
type postCounterItem struct {
	PK           string `dynamodbav:"pk"`
	SK           string `dynamodbav:"sk"`
	AuthorID     string `dynamodbav:"authorId"`
	Status       string `dynamodbav:"status"`
	CommentCount int    `dynamodbav:"commentCount"`
	LikeCount    int    `dynamodbav:"likeCount"`
}

// newUserItem is the profile's item, without counts (they are its counter's).
func newUserItem(u User) userItem {
	u.PostCount, u.FollowerCount, u.FollowingCount = 0, 0, 0
	return userItem{PK: UserPK(u.ID), SK: SKMetadata, GSI1PK: handlePK(u.Handle), GSI1SK: UserPK(u.ID), User: u}
}

// newUserCounter is the counter item holding u's counts.
func newUserCounter(u User) userCounterItem {
	return userCounterItem{PK: UserPK(u.ID), SK: SKCount, GSI1PK: handlePK(u.Handle), GSI1SK: SKCount,
		PostCount: u.PostCount, FollowerCount: u.FollowerCount, FollowingCount: u.FollowingCount}
}

// newPostCounter is the counter item holding p's counts.
func newPostCounter(p Post) postCounterItem {
	status := p.Status
	if status == "" {
		status = StatusPublished
	}
	return postCounterItem{PK: PostPK(p.ID), SK: SKCount, AuthorID: p.AuthorID, Status: status, CommentCount: p.CommentCount, LikeCount: p.LikeCount}
}

// add adds the counts of c, a user's counter item read as a User, to u's.
func (u *User) add(c User) {
	u.PostCount += c.PostCount
	u.FollowerCount += c.FollowerCount
	u.FollowingCount += c.FollowingCount
	for _, t := range c.Hot {
		u.FollowerCount += t.Followers
	}
	u.Shards = max(u.Shards, c.Shards)
}

func (u *User) tallies() *map[string]ShardTally { return &u.Hot }
func (p *Post) tallies() *map[string]ShardTally { return &p.Hot }

// add adds the counts of c, a post's counter item read as a Post, to p's.
func (p *Post) add(c Post) {
	p.CommentCount += c.CommentCount
	p.LikeCount += c.LikeCount
	for _, t := range c.Hot {
		p.CommentCount += t.Comments
		p.LikeCount += t.Likes
	}
	p.Shards = max(p.Shards, c.Shards)
}

func newHandleItem(u User) handleItem {
	return handleItem{PK: handlePK(u.Handle), SK: skHandle, UserID: u.ID}
}

// newPostItem is the item of a new post, without counts: a draft under
// draftSK, a published post under PublishedSK(its ID), its creation being
// its publication.
func newPostItem(p Post) postItem {
	p.CommentCount, p.LikeCount = 0, 0 // the counter's
	sk := PublishedSK(p.ID)
	if !p.Published() {
		sk = draftSK(p.ID)
	}
	return postItem{PK: PostPK(p.ID), SK: SKMetadata, GSI1PK: AuthorPK(p.AuthorID), GSI1SK: sk, Post: p}
}

func newCommentItem(c Comment) commentItem {
	return commentItem{PK: PostPK(c.PostID), SK: CommentSK(c.ID), GSI1PK: AuthorPK(c.AuthorID), GSI1SK: CommentSK(c.ID), Comment: c}
}

func newFollowItem(f Follow) followItem {
	return followItem{PK: UserPK(f.FollowerID), SK: FollowsSK(f.FollowedID), GSI2PK: FollowersPK(f.FollowedID), GSI2SK: followerSK(f.FollowerID), Follow: f}
}
