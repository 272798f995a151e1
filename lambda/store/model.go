package store

import (
	"slices"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// The entities as the GraphQL API returns them. JSON names are the schema's
// field names; dynamodbav names are the item's attributes. Each item also
// carries its key attributes (see keys.go), added by the *Item functions.

// User is a profile. Email is private to its owner: callers that show a user
// to someone else must clear it.
type User struct {
	ID             string  `json:"id" dynamodbav:"id"`
	Handle         string  `json:"handle" dynamodbav:"handle"`
	Name           string  `json:"name" dynamodbav:"name"`
	Email          *string `json:"email" dynamodbav:"email,omitempty"`
	Bio            *string `json:"bio" dynamodbav:"bio,omitempty"`
	CreatedAt      string  `json:"createdAt" dynamodbav:"createdAt"`
	PostCount      int     `json:"postCount" dynamodbav:"postCount"`
	FollowerCount  int     `json:"followerCount" dynamodbav:"followerCount"`
	FollowingCount int     `json:"followingCount" dynamodbav:"followingCount"`
}

// AppendJSON appends the user as payload.Marshal encodes it, without
// reflection (a batch's answers are mostly users). It writes its keys as
// literals rather than through object, as Post and Comment do: a user is
// always read whole, and object's per-member checks made encoding a batch
// of users 120 -> 190 ns per user (BenchmarkTraffic/*/encode).
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
	dst = append(dst, `,"postCount":`...)
	dst = payload.AppendInt(dst, u.PostCount)
	dst = append(dst, `,"followerCount":`...)
	dst = payload.AppendInt(dst, u.FollowerCount)
	dst = append(dst, `,"followingCount":`...)
	dst = payload.AppendInt(dst, u.FollowingCount)
	return append(dst, '}')
}

// Post is a blog post. CommentCount is kept exact by the writes that add or
// remove its comments.
type Post struct {
	ID           string `json:"id" dynamodbav:"id"`
	AuthorID     string `json:"authorId" dynamodbav:"authorId"`
	Title        string `json:"title" dynamodbav:"title"`
	Body         string `json:"body" dynamodbav:"body"`
	CreatedAt    string `json:"createdAt" dynamodbav:"createdAt"`
	UpdatedAt    string `json:"updatedAt" dynamodbav:"updatedAt"`
	CommentCount int    `json:"commentCount" dynamodbav:"commentCount"`
	// Status is StatusDraft or StatusPublished; items written before drafts
	// existed have none, and are published.
	Status string `json:"status" dynamodbav:"status,omitempty"`

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
	Follow
}

func newUserItem(u User) userItem {
	return userItem{PK: UserPK(u.ID), SK: SKMetadata, GSI1PK: HandlePK(u.Handle), GSI1SK: UserPK(u.ID), User: u}
}

func newHandleItem(u User) handleItem {
	return handleItem{PK: HandlePK(u.Handle), SK: SKHandle, UserID: u.ID}
}

// newPostItem is the item of a new post: a draft under DraftSK, a published
// post under PublishedSK(its ID), its creation being its publication.
func newPostItem(p Post) postItem {
	sk := PublishedSK(p.ID)
	if !p.Published() {
		sk = DraftSK(p.ID)
	}
	return postItem{PK: PostPK(p.ID), SK: SKMetadata, GSI1PK: AuthorPK(p.AuthorID), GSI1SK: sk, Post: p}
}

func newCommentItem(c Comment) commentItem {
	return commentItem{PK: PostPK(c.PostID), SK: CommentSK(c.ID), GSI1PK: AuthorPK(c.AuthorID), GSI1SK: CommentSK(c.ID), Comment: c}
}

func newFollowItem(f Follow) followItem {
	return followItem{PK: UserPK(f.FollowerID), SK: FollowsSK(f.FollowedID), GSI2PK: FollowersPK(f.FollowedID), GSI2SK: FollowerSK(f.FollowerID), Follow: f}
}

// attributes are the attributes read of an item by a projection; nil when
// every attribute was read.
type attributes []string

// partial is an entity that may be read with a projection.
type partial interface{ setRead(attrs []string) }

// readOnly records on v, when it is a partial entity, that only attrs were
// read (nil: everything).
func readOnly[T any](v *T, attrs []string) {
	if p, ok := any(v).(partial); ok && attrs != nil {
		p.setRead(attrs)
	}
}

// object appends a JSON object's members to dst, leaving out those whose
// attribute was not read (none when read is nil).
type object struct {
	dst   []byte
	read  attributes
	empty bool
}

// object starts an object on dst whose members are the attributes read.
func (a attributes) object(dst []byte) object { return object{append(dst, '{'), a, true} }

// member appends the member's key, and reports whether it was read.
func (o *object) member(name string) bool {
	if o.read != nil && !slices.Contains(o.read, name) {
		return false
	}
	if !o.empty {
		o.dst = append(o.dst, ',')
	}
	o.empty = false
	o.dst = append(append(append(o.dst, '"'), name...), '"', ':')
	return true
}

func (o *object) string(name, v string) {
	if o.member(name) {
		o.dst = payload.AppendString(o.dst, v)
	}
}

func (o *object) int(name string, v int) {
	if o.member(name) {
		o.dst = payload.AppendInt(o.dst, v)
	}
}

func (o *object) end() []byte { return append(o.dst, '}') }
