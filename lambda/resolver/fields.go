package resolver

// The route table: the resolver of every routed field, and what the
// resolvers read of the table and of their parents.

import (
	"context"

	"github.com/example/appsync-dynamo/lambda/store"
)

// routes maps every field of the core (CoreRoutes) to its resolver.
func (h *Handler) routes() map[string]Field {
	return map[string]Field{
		"Query.user":  Each(h.user),
		"Query.post":  Each(h.post),
		"Query.posts": Each(h.posts),
		"Query.me":    Each(h.me),

		"User.posts":     Each(h.userPosts),
		"User.comments":  Each(h.userComments),
		"User.following": h.userConnection(h.store.Following, h.followingFromPrefetch, func(f store.Follow) string { return f.FollowedID }),
		"User.followers": h.userConnection(h.store.Followers, nil, func(f store.Follow) string { return f.FollowerID }),

		"Post.author":    batchedLookup(func(p postSource) string { return p.AuthorID }, h.users, showUser, "author not found"),
		"Post.comments":  Each(h.postComments),
		"Post.likes":     Each(h.postLikes),
		"Post.likedByMe": h.likedByMe,

		"Like.user": batchedLookup(func(l likeSource) string { return l.UserID }, h.users, showUser, "user not found"),

		"Comment.author": batchedLookup(func(c commentSource) string { return c.AuthorID }, h.commentAuthors, showUser, "author not found"),
		"Comment.post":   h.commentPosts,

		"Follow.follower": batchedLookup(func(f followSource) string { return f.FollowerID }, h.users, showUser, "user not found"),
		"Follow.followed": batchedLookup(func(f followSource) string { return f.FollowedID }, h.users, showUser, "user not found"),

		"Mutation.createUser":    mutation(h.createUser),
		"Mutation.updateUser":    mutation(h.updateUser),
		"Mutation.createPost":    mutation(h.createPost),
		"Mutation.updatePost":    mutation(h.updatePost),
		"Mutation.deletePost":    mutation(h.deletePost),
		"Mutation.publishPost":   mutation(h.publishPost),
		"Mutation.createComment": mutation(h.createComment),
		"Mutation.deleteComment": mutation(h.deleteComment),
		"Mutation.follow":        mutation(h.follow),
		"Mutation.unfollow":      mutation(h.unfollow),
		"Mutation.likePost":      mutation(h.likePost),
		"Mutation.unlikePost":    mutation(h.unlikePost),
	}
}

// Store is what the resolvers need from the table; *store.Store has it. Each
// part is declared beside the resolvers that use it: reads and pages in
// this file, prefetches in prefetch.go, writes in mutations.go.
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

// Parent objects, as far as child resolvers read them from source.
type (
	userSource struct {
		ID                  string                        `json:"id"`
		PrefetchedFollowing *store.Prefetch[store.Follow] `json:"prefetchedFollowing"`
	}
	postSource struct {
		AuthorID string `json:"authorId"`
	}
	// postCommentsSource is a post as Post.comments reads it: with what its
	// resolver prefetched (decoded only by the field that uses it, never by
	// its siblings).
	postCommentsSource struct {
		ID                 string                         `json:"id"`
		PrefetchedComments *store.Prefetch[store.Comment] `json:"prefetchedComments"`
	}
	commentSource struct {
		PostID   string `json:"postId"`
		AuthorID string `json:"authorId"`
	}
	followSource struct {
		FollowerID string `json:"followerId"`
		FollowedID string `json:"followedId"`
	}
	postIDSource struct {
		ID string `json:"id"`
	}
	likeSource struct {
		UserID string `json:"userId"`
	}
)
