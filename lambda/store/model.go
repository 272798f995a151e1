package store

import (
	"github.com/example/appsync-dynamo/lambda/payload"
)

// The entities as the GraphQL API returns them. JSON names are the schema's
// field names; dynamodbav names are the item's attributes. Each item also
// carries its key attributes (see keys.go), added by the *Item functions.

// User is a profile. Email is private to its owner: callers showing a user
// to someone else clear it. Its counts are on its counter item (SKCount).
type User struct {
	ID             string  `json:"id" dynamodbav:"id"`
	Handle         string  `json:"handle" dynamodbav:"handle"`
	Name           string  `json:"name" dynamodbav:"name"`
	Email          *string `json:"email" dynamodbav:"email,omitempty"`
	Bio            *string `json:"bio" dynamodbav:"bio,omitempty"`
	CreatedAt      string  `json:"createdAt" dynamodbav:"createdAt"`
	PostCount      int     `json:"postCount" dynamodbav:"postCount,omitempty"`
	FollowerCount  int     `json:"followerCount" dynamodbav:"followerCount,omitempty"`
	FollowingCount int     `json:"followingCount" dynamodbav:"followingCount,omitempty"`
	// Shards, on a hot user's counter item, is how many shards its
	// followers are spread over (0: not hot), and Hot each shard's counts
	// as the projector last copied them there (lambda/hotkeys).
	Shards int                   `json:"-" dynamodbav:"shards,omitempty"`
	Hot    map[string]ShardTally `json:"-" dynamodbav:"hot,omitempty"`

	uncounted bool // its counts were not read (Users without counts): not encoded
}

// WithoutCounts is u as read without its counts (Users with counts false):
// it encodes none, rather than a zero in place of an unread count.
func (u User) WithoutCounts() User {
	u.uncounted = true
	return u
}

// MarshalJSON encodes the user as AppendJSON does.
func (u User) MarshalJSON() ([]byte, error) { return u.AppendJSON(nil), nil }

// AppendJSON appends the user as payload.Marshal encodes it, without
// reflection, its keys as literals: a user is always read whole
// (BenchmarkTraffic/*/encode).
func (u User) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = payload.AppendString(dst, u.ID)
	dst = append(dst, `,"handle":`...)
	dst = payload.AppendString(dst, u.Handle)
	dst = append(dst, `,"name":`...)
	dst = payload.AppendString(dst, u.Name)
	dst = append(dst, `,"email":`...)
	dst = payload.AppendStringPtr(dst, u.Email)
	dst = append(dst, `,"bio":`...)
	dst = payload.AppendStringPtr(dst, u.Bio)
	dst = append(dst, `,"createdAt":`...)
	dst = payload.AppendString(dst, u.CreatedAt)
	if u.uncounted { // a zero in place of an unread count would be a plausible wrong answer
		return append(dst, '}')
	}
	dst = append(dst, `,"postCount":`...)
	dst = payload.AppendInt(dst, u.PostCount)
	dst = append(dst, `,"followerCount":`...)
	dst = payload.AppendInt(dst, u.FollowerCount)
	dst = append(dst, `,"followingCount":`...)
	dst = payload.AppendInt(dst, u.FollowingCount)
	return append(dst, '}')
}

// Post is a blog post. CommentCount and LikeCount are kept exact by the
// writes that add or remove its comments and likes, on the post's counter
// item (SKCount) as for User.
type Post struct {
	ID           string `json:"id" dynamodbav:"id"`
	AuthorID     string `json:"authorId" dynamodbav:"authorId"`
	Title        string `json:"title" dynamodbav:"title"`
	Body         string `json:"body" dynamodbav:"body"`
	CreatedAt    string `json:"createdAt" dynamodbav:"createdAt"`
	UpdatedAt    string `json:"updatedAt" dynamodbav:"updatedAt"`
	CommentCount int    `json:"commentCount" dynamodbav:"commentCount,omitempty"`
	LikeCount    int    `json:"likeCount" dynamodbav:"likeCount,omitempty"`
	// Status is StatusDraft or StatusPublished; items written before drafts
	// existed have none, and are published.
	Status string `json:"status" dynamodbav:"status,omitempty"`
	// Shards, on a hot post's counter item, is how many shard partitions
	// its likes are written to (0: not hot), and Hot each shard's counts as
	// the projector last copied them there (lambda/hotkeys).
	Shards int                   `json:"-" dynamodbav:"shards,omitempty"`
	Hot    map[string]ShardTally `json:"-" dynamodbav:"hot,omitempty"`
	// Version, on the post's own item, counts its edits and its
	// publication (none before the first), so that a write conditioned on
	// the post as it read it (publishPost, deletePost) finds an edit made
	// meanwhile, whatever its time.
	Version int64 `json:"-" dynamodbav:"v,omitempty"`

	read attributes // what was read, when not every attribute was
}

// The values of Post.Status (the schema's PostStatus).
const (
	StatusDraft     = "DRAFT"
	StatusPublished = "PUBLISHED"
)

// Published reports whether the post is published (visible to everyone).
func (p Post) Published() bool { return p.Status != StatusDraft }

// VisibleTo reports whether the caller (a user ID, "" for none) may see the
// post: everyone a published post, only its author a draft.
func (p Post) VisibleTo(caller string) bool {
	return p.Published() || (caller != "" && caller == p.AuthorID)
}

// MarshalJSON encodes the post as the Lambda returns it: only the attributes
// that were read (a zero value in place of an unread title would be a
// plausible wrong answer), without HTML escaping.
func (p Post) MarshalJSON() ([]byte, error) { return p.AppendJSON(nil), nil }

// AppendJSON appends the post as MarshalJSON encodes it, without
// reflection.
func (p Post) AppendJSON(dst []byte) []byte {
	if p.Status == "" {
		p.Status = StatusPublished
	}
	o := p.read.object(dst)
	o.string("id", p.ID)
	o.string("authorId", p.AuthorID)
	o.string("title", p.Title)
	o.string("body", p.Body)
	o.string("createdAt", p.CreatedAt)
	o.string("updatedAt", p.UpdatedAt)
	o.int("commentCount", p.CommentCount)
	o.int("likeCount", p.LikeCount)
	o.string("status", p.Status)
	return o.end()
}

func (p *Post) setRead(attrs []string) { p.read = attributes(attrs) }

// Comment is a comment, stored in its post's partition.
type Comment struct {
	ID        string `json:"id" dynamodbav:"id"`
	PostID    string `json:"postId" dynamodbav:"postId"`
	AuthorID  string `json:"authorId" dynamodbav:"authorId"`
	Body      string `json:"body" dynamodbav:"body"`
	CreatedAt string `json:"createdAt" dynamodbav:"createdAt"`

	read attributes // what was read, when not every attribute was
}

// MarshalJSON encodes the comment with only the attributes that were read, as
// Post.MarshalJSON does.
func (c Comment) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// AppendJSON appends the comment as MarshalJSON encodes it, without
// reflection.
func (c Comment) AppendJSON(dst []byte) []byte {
	o := c.read.object(dst)
	o.string("id", c.ID)
	o.string("postId", c.PostID)
	o.string("authorId", c.AuthorID)
	o.string("body", c.Body)
	o.string("createdAt", c.CreatedAt)
	return o.end()
}

func (c *Comment) setRead(attrs []string) { c.read = attributes(attrs) }

// Follow is the edge "FollowerID follows FollowedID".
type Follow struct {
	FollowerID string `json:"followerId" dynamodbav:"followerId"`
	FollowedID string `json:"followedId" dynamodbav:"followedId"`
	CreatedAt  string `json:"createdAt" dynamodbav:"createdAt"`
}

// Like is "UserID likes PostID", stored in the post's partition under a ULID
// of its time (ID), so a post's likes list by time.
type Like struct {
	ID      string `json:"id" dynamodbav:"id"`
	PostID  string `json:"postId" dynamodbav:"postId"`
	UserID  string `json:"userId" dynamodbav:"userId"`
	LikedAt string `json:"likedAt" dynamodbav:"likedAt"`
	// Partition, on the guard, is the partition the like is in when it is
	// one of a hot post's shards ("": the post's own).
	Partition string `json:"-" dynamodbav:"likePk,omitempty"`
}

// AppendJSON appends the follow as encoding/json encodes it, without
// reflection.
func (f Follow) AppendJSON(dst []byte) []byte {
	dst = payload.AppendString(append(dst, `{"followerId":`...), f.FollowerID)
	dst = payload.AppendString(append(dst, `,"followedId":`...), f.FollowedID)
	dst = payload.AppendString(append(dst, `,"createdAt":`...), f.CreatedAt)
	return append(dst, '}')
}
