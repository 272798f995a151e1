package resolver

// What the resolvers need of the table: small interfaces, joined in Store,
// which *store.Store implements and a feature's layer may wrap.

import (
	"context"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Store is what the resolvers need from the table; *store.Store has it:
// point reads, pages, reads of a parent with its children, and writes.
type Store interface {
	reads
	pages
	prefetches
	writes
}

var _ Store = (*store.Store)(nil)

// reads is what the read fields need of the table to look items up: by key
// (a Query of an entity's own item and its counter), by handle (a Query on
// GSI1) and many at once (BatchGetItem).
type reads interface {
	User(ctx context.Context, id string) (store.User, error)
	UserByHandle(ctx context.Context, handle string) (store.User, error)
	Users(ctx context.Context, ids []string, counts bool) (map[string]store.User, error)
	Post(ctx context.Context, id string) (store.Post, error)
	Posts(ctx context.Context, ids []string, attrs ...string) (map[string]store.Post, error)
	PostsExist(ctx context.Context, ids []string) (map[string]bool, error)
	LikedBy(ctx context.Context, userID string, postIDs []string) (map[string]bool, error)
}

// pages is what the connection fields need of the table: one Query each.
type pages interface {
	PostsByAuthor(ctx context.Context, authorID string, drafts bool, page store.PageRequest) (store.Page[store.Post], error)
	CommentsOnPost(ctx context.Context, postID string, page store.PageRequest) (store.Page[store.Comment], error)
	CommentsByAuthor(ctx context.Context, authorID string, page store.PageRequest) (store.Page[store.Comment], error)
	Following(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
	Followers(ctx context.Context, userID string, page store.PageRequest) (store.Page[store.Follow], error)
	Likes(ctx context.Context, postID string, page store.PageRequest) (store.Page[store.Like], error)
}

// prefetches is what the pattern needs of the table: a parent read together
// with the first page of one of its connections (one Query of its partition),
// and the pages served from such a prefetch with no request.
type prefetches interface {
	PostWithComments(ctx context.Context, id string, first store.PageRequest, maxBytes int) (store.Post, store.Prefetch[store.Comment], error)
	UserWithFollowing(ctx context.Context, id string, limit, maxBytes int) (store.User, store.Prefetch[store.Follow], error)
	CommentsFromPrefetch(p store.Prefetch[store.Comment], req store.PageRequest) (store.Page[store.Comment], bool)
	FollowingFromPrefetch(p store.Prefetch[store.Follow], req store.PageRequest) (store.Page[store.Follow], bool)
}

// writes is what the mutations need of the table: one call each, which is the
// whole write (a transaction, or one conditional UpdateItem).
type writes interface {
	CreateUser(ctx context.Context, u store.User) (store.User, error)
	UpdateUser(ctx context.Context, id string, name, bio *string) (store.User, error)
	CreatePost(ctx context.Context, authorID string, in store.NewPost) (store.Post, error)
	PublishPost(ctx context.Context, callerID, id string) (store.Post, error)
	UpdatePost(ctx context.Context, callerID, id string, edit store.PostEdit) (store.Post, error)
	DeletePost(ctx context.Context, callerID, id string) (store.Post, error)
	CreateComment(ctx context.Context, authorID, postID, body string) (store.Comment, error)
	DeleteComment(ctx context.Context, callerID, postID, id string) (store.Comment, error)
	Follow(ctx context.Context, followerID, followedID string) (store.Follow, error)
	Unfollow(ctx context.Context, followerID, followedID string) (*store.Follow, error)
	LikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error)
	UnlikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error)
}
