package store

import (
	"cmp"
	"reflect"
	"slices"
	"strings"

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

// Entities read in part (a projection): what was read, and their JSON
// written with what was read alone, so that an attribute not read is never
// answered as its zero value.

// schemaAttributes are the item attribute names (dynamodbav tags) of T's
// fields the Lambda answers (a json tag other than "-"), so that a projection
// of the selection reads what it selects (TestEachFieldIsItsAttribute).
func schemaAttributes[T any]() []string { return tagNames[T]("json") }

// tagNames are the names T's fields take in tag (those without one, or
// named "-", left out).
func tagNames[T any](tag string) []string {
	var names []string
	t := reflect.TypeFor[T]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get(tag), ",")
		if name != "" && name != "-" {
			names = append(names, name)
		}
	}
	return names
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

// strings writes a list of strings (nil as [], as a list field the schema
// declares non-null needs).
func (o *object) strings(name string, v []string) {
	if o.member(name) {
		o.dst = append(o.dst, '[')
		for i, s := range v {
			if i > 0 {
				o.dst = append(o.dst, ',')
			}
			o.dst = payload.AppendString(o.dst, s)
		}
		o.dst = append(o.dst, ']')
	}
}

func (o *object) end() []byte { return append(o.dst, '}') }

// Count names: the counts of a user and of a post, as attributes and as the
// schema's fields. A read asks for counter items only when it may read one
// of them (SelectsCount).
var (
	UserCounts = countNames[userCounterItem, User]()
	PostCounts = countNames[postCounterItem, Post]()
)

// countNames are the attributes of the counter item C that are integers
// and attributes of the entity E.
func countNames[C, E any]() []string {
	var names []string
	c := reflect.TypeFor[C]()
	for i := range c.NumField() {
		name, _, _ := strings.Cut(c.Field(i).Tag.Get("dynamodbav"), ",")
		if c.Field(i).Type.Kind() == reflect.Int && slices.Contains(schemaAttributes[E](), name) {
			names = append(names, name)
		}
	}
	return names
}

// SelectsCount reports whether a read of attrs (nil: everything) reads one
// of counts.
func SelectsCount(attrs []string, counts []string) bool {
	return attrs == nil || slices.ContainsFunc(attrs, func(a string) bool { return slices.Contains(counts, a) })
}

// ShardTally is a part's counts as the projector copies them onto the
// parent's counter, with the part counter's version they were read at.
type ShardTally struct {
	Likes     int   `dynamodbav:"l"`
	Comments  int   `dynamodbav:"c"`
	Followers int   `dynamodbav:"f,omitempty"` // a hot user's
	Version   int64 `dynamodbav:"v"`
}

// CountedAttrs adds to attrs, a projection, the attributes a hot post's or
// user's counter holds its shards' counts in, when attrs reads counts.
func CountedAttrs(attrs []string) []string {
	if attrs == nil || !SelectsCount(attrs, PostCounts) && !SelectsCount(attrs, UserCounts) {
		return attrs
	}
	return append(slices.Clone(attrs), "shards", "hot")
}
