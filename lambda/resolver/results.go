package resolver

import "github.com/example/appsync-dynamo/lambda/store"

// What a parent returns with its prefetch: a post with its first comments,
// a user with its first follows, encoded as the entity is with the
// prefetch as one more member, which AppSync passes on to the children.

// postResult is a Post as resolvers return it: with its first comments when
// they were read together with it. AppSync ignores the extra key in the
// response and hands the whole object to the post's child resolvers.
type postResult struct {
	store.Post
	PrefetchedComments *store.Prefetch[store.Comment] `json:"prefetchedComments,omitempty"`
}

// MarshalJSON encodes the post as store.Post does (only what was read), with
// its prefetched comments, if any, as one more member. Without it, Post's own
// MarshalJSON, promoted through the embedding, would drop them.
func (r postResult) MarshalJSON() ([]byte, error) { return r.AppendJSON(nil), nil }

// AppendJSON appends the post as MarshalJSON encodes it, without reflection
// (store.Post's AppendJSON would drop the prefetch as well).
func (r postResult) AppendJSON(dst []byte) []byte {
	start := len(dst)
	dst = r.Post.AppendJSON(dst)
	if r.PrefetchedComments == nil {
		return dst
	}
	return appendMember(dst, start, "prefetchedComments", func(dst []byte) []byte {
		return r.PrefetchedComments.AppendJSON(dst, store.Comment.AppendJSON)
	})
}

// appendMember adds to the object encoded in dst[start:] the member name,
// whose value appendValue appends.
func appendMember(dst []byte, start int, name string, appendValue func([]byte) []byte) []byte {
	if len(dst)-start > 2 { // not {}
		dst = append(dst[:len(dst)-1], ',')
	} else {
		dst = dst[:len(dst)-1]
	}
	dst = appendValue(append(append(append(dst, '"'), name...), '"', ':'))
	return append(dst, '}')
}

// userResult is a User with the follows it made, when read together.
type userResult struct {
	store.User
	PrefetchedFollowing *store.Prefetch[store.Follow] `json:"prefetchedFollowing,omitempty"`
}

// MarshalJSON encodes the user as store.User does, with its prefetched
// follows, if any, as one more member (User's own MarshalJSON, promoted
// through the embedding, would drop them).
func (r userResult) MarshalJSON() ([]byte, error) {
	dst := r.User.AppendJSON(nil)
	if r.PrefetchedFollowing == nil {
		return dst, nil
	}
	return appendMember(dst, 0, "prefetchedFollowing", func(dst []byte) []byte {
		return r.PrefetchedFollowing.AppendJSON(dst, store.Follow.AppendJSON)
	}), nil
}
