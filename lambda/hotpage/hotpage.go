// Package hotpage keeps a hot post's page in memory, in each execution
// environment: a feature (docs/layout.md), a layer between the resolvers and
// the store. A post read by many at once has turned hot (its likes and
// comments spread over shards: lambda/hotkeys), and its page (the post with
// its counts, the first page of its comments in each order and range, those
// comments' authors) is read from the table by each execution environment
// at most once per TTL: the readers of one environment share what it read,
// and concurrent misses wait for one read. What is kept are the table's
// items, never an answer: what a caller may see (a draft, an email,
// likedByMe) is decided per request as for any post. An environment drops a
// post's page when it writes the post itself (an edit, a deletion, a
// comment, a like); the others serve it up to the TTL late. Posts not known
// hot, and reads that must be consistent (a mutation's answers), read the
// table as ever.
package hotpage

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/kept"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

// TTL is how long an environment serves a hot post's page from memory: a
// reader in another environment sees a comment, a like or an edit at most
// this late, and a deleted post is served at most this long.
const TTL = 5 * time.Second

// maxPages bounds the hot posts an environment keeps pages of (the largest
// post's page is about 100 kB: docs/capacity.md).
const maxPages = 64

// Feature puts the pages of the hot posts s knows between the resolvers and
// the store (resolver.Feature.Store).
func Feature(s *store.Store, opts ...Option) resolver.Feature {
	return resolver.Feature{Store: func(in resolver.Store) resolver.Store { return New(in, s, opts...) }}
}

// Option configures New.
type Option func(*Store)

// WithTTL sets how long pages are kept (TTL by default; 0 keeps none), for
// tests.
func WithTTL(ttl time.Duration) Option { return func(s *Store) { s.ttl = ttl } }

// Store is in, the store the resolvers read, with the pages of the posts s
// knows hot kept for the TTL on s's clock.
type Store struct {
	resolver.Store
	hot *store.Store // which posts are hot, and the clock
	ttl time.Duration

	mu      sync.Mutex
	posts   map[string]*page
	authors map[string]*kept.Value[store.User]
}

// New returns in with hot posts' pages kept (Feature).
func New(in resolver.Store, s *store.Store, opts ...Option) *Store {
	k := &Store{Store: in, hot: s, ttl: TTL, posts: map[string]*page{}, authors: map[string]*kept.Value[store.User]{}}
	for _, o := range opts {
		o(k)
	}
	return k
}

// page is what is kept of one hot post: the post and its counts, and its
// first pages of comments by shape (order, range, limit).
type page struct {
	post     *kept.Value[store.Post]
	comments map[string]*kept.Value[store.Page[store.Comment]]
}

// page returns postID's entry, made when absent (the oldest dropped past
// maxPages); the caller holds mu.
func (s *Store) page(postID string) *page {
	p := s.posts[postID]
	if p == nil {
		if len(s.posts) >= maxPages {
			s.dropOldest()
		}
		p = &page{comments: map[string]*kept.Value[store.Page[store.Comment]]{}}
		s.posts[postID] = p
	}
	return p
}

func (s *Store) dropOldest() {
	oldest, at := "", time.Time{}
	for id, p := range s.posts {
		if p.post != nil && (oldest == "" || p.post.At.Before(at)) {
			oldest, at = id, p.post.At
		}
	}
	if oldest == "" {
		for id := range s.posts {
			oldest = id
			break
		}
	}
	delete(s.posts, oldest)
}

// drop forgets what is kept of the post (its writer's own environment sees
// its write at once).
func (s *Store) drop(postID string) {
	s.mu.Lock()
	delete(s.posts, postID)
	s.mu.Unlock()
}

// dropAuthor forgets the users as comments' authors.
func (s *Store) dropAuthor(userIDs ...string) {
	s.mu.Lock()
	for _, id := range userIDs {
		delete(s.authors, id)
	}
	s.mu.Unlock()
}

// through is kept.Through on s's values, under s.mu, for the TTL.
func through[T any](ctx context.Context, s *Store, get func() *kept.Value[T], set func(*kept.Value[T]), read func(context.Context) (T, error)) (T, error) {
	v, err := kept.Through(ctx, &s.mu, s.hot.Now, s.ttl, get, set, read)
	if errors.Is(err, kept.ErrWaitCut) {
		err = store.Fail("hotpage.page", err)
	}
	return v, err
}

// KeepsPage reports whether a read of the post goes through its kept page:
// it is known hot and pages are kept; with "" whether any post's may be.
func (s *Store) KeepsPage(postID string) bool {
	return s.ttl > 0 && hotkeys.Of(s.hot).KnowsHot(postID)
}

// keeps is KeepsPage for a read that need not be consistent.
func (s *Store) keeps(ctx context.Context, postID string) bool {
	return s.KeepsPage(postID) && !store.ConsistentReads(ctx)
}

// Post is the store's Post, through a hot post's kept page.
func (s *Store) Post(ctx context.Context, postID string) (store.Post, error) {
	if !s.keeps(ctx, postID) {
		return s.Store.Post(ctx, postID)
	}
	return through(ctx, s,
		func() *kept.Value[store.Post] { return s.page(postID).post },
		func(k *kept.Value[store.Post]) { s.page(postID).post = k },
		func(ctx context.Context) (store.Post, error) { return s.Store.Post(ctx, postID) })
}

// PostWithComments is the store's, of a hot post its kept post and no
// comments (a hot post's are in its shards too: the child reads them, as
// the store's prefetch of a hot post leaves them).
func (s *Store) PostWithComments(ctx context.Context, id string, first store.PageRequest, maxBytes int) (store.Post, store.Prefetch[store.Comment], error) {
	if !s.keeps(ctx, id) {
		return s.Store.PostWithComments(ctx, id, first, maxBytes)
	}
	p, err := s.Post(ctx, id)
	return p, store.Prefetch[store.Comment]{Parent: id, Items: []store.Comment{}, Limit: first.Limit, Args: store.CommentsShape(first)}, err
}

// CommentsOnPost is the store's, a hot post's first page through its kept
// page: the page is read whole (every attribute, no byte budget) and given
// as page asks for it (its attributes, its bytes).
func (s *Store) CommentsOnPost(ctx context.Context, postID string, req store.PageRequest) (store.Page[store.Comment], error) {
	if req.NextToken != "" || !s.keeps(ctx, postID) {
		return s.Store.CommentsOnPost(ctx, postID, req)
	}
	whole := req
	whole.Attributes, whole.MaxBytes = nil, 0
	key := store.CommentsShape(req) + "|" + strconv.Itoa(req.Limit)
	read, err := through(ctx, s,
		func() *kept.Value[store.Page[store.Comment]] { return s.page(postID).comments[key] },
		func(k *kept.Value[store.Page[store.Comment]]) { s.page(postID).comments[key] = k },
		func(ctx context.Context) (store.Page[store.Comment], error) {
			return s.Store.CommentsOnPost(ctx, postID, whole)
		})
	if err != nil {
		return store.Page[store.Comment]{}, err
	}
	return read.Only(req.Attributes).Fit(req.MaxBytes)
}

// PageAuthors returns the users with the given IDs, as Users does, for the
// comments of the hot post postID: through what is kept of its authors
// (each read at most once a TTL, concurrent misses waiting for one read)
// when the post's page is kept, otherwise from the table as Users does.
func (s *Store) PageAuthors(ctx context.Context, postID string, ids []string, counts bool) (map[string]store.User, error) {
	if !s.keeps(ctx, postID) {
		return s.Users(ctx, ids, counts)
	}
	out := make(map[string]store.User, len(ids))
	claimed, waiting := s.claimAuthors(s.hot.Now(), ids, out)
	if len(claimed) > 0 {
		start := s.hot.Now()
		read, err := s.Users(ctx, slices.Collect(maps.Keys(claimed)), true) // with counts: what any selection reads
		s.keepAuthors(start, claimed, read, err)
		if err != nil {
			return nil, err
		}
		for id, u := range read {
			out[id] = u
		}
	}
	var again []string // kept by a read that failed
	for id, w := range waiting {
		k := w.k
		select {
		case <-w.ready:
		case <-ctx.Done():
			return nil, store.Fail("hotpage.PageAuthors", ctx.Err())
		}
		switch s.mu.Lock(); {
		case k.Err == nil:
			out[id] = k.V
		case k.Err != errAbsent:
			again = append(again, id)
		}
		s.mu.Unlock()
	}
	if len(again) > 0 {
		read, err := s.Users(ctx, again, true)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, read)
	}
	if !counts {
		for id, u := range out {
			out[id] = u.WithoutCounts()
		}
	}
	return out, nil
}

// claimAuthors puts into out the kept authors of ids read within the TTL,
// and returns those it claims to read (a pending entry made for each) and
// those another read is reading.
func (s *Store) claimAuthors(now time.Time, ids []string, out map[string]store.User) (claimed map[string]*kept.Value[store.User], waiting map[string]pending) {
	claimed, waiting = map[string]*kept.Value[store.User]{}, map[string]pending{}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		switch k := s.authors[id]; {
		case k != nil && k.Ready != nil:
			waiting[id] = pending{k, k.Ready}
		case k != nil && now.Sub(k.At) < s.ttl:
			if k.Err == nil {
				out[id] = k.V
			}
		case claimed[id] == nil:
			if len(s.authors) >= maxPages*store.MaxLimit {
				clear(s.authors)
			}
			k = &kept.Value[store.User]{Ready: make(chan struct{})}
			s.authors[id], claimed[id] = k, k
		}
	}
	return claimed, waiting
}

// pending is an author another read is reading, and what closes when it
// is done.
type pending struct {
	k     *kept.Value[store.User]
	ready chan struct{}
}

// keepAuthors keeps what a read of the claimed authors found, as of start
// (an absent one as absent); a failed read keeps nothing.
func (s *Store) keepAuthors(start time.Time, claimed map[string]*kept.Value[store.User], read map[string]store.User, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for id, k := range claimed {
		u, found := read[id]
		switch {
		case err != nil:
			k.Err = err
			if s.authors[id] == k {
				delete(s.authors, id)
			}
		case found:
			k.V = u
		default:
			k.Err = errAbsent
		}
		k.At = start
		close(k.Ready)
		k.Ready = nil
	}
}

// errAbsent marks a user kept as absent.
var errAbsent = errs.E("hotpage.PageAuthors", errs.NotFound, "user not found")

// The writes of a post drop its page, and those of a user its kept author,
// in this environment: its writer reads its write at once.

func (s *Store) UpdateUser(ctx context.Context, id string, name, bio *string) (store.User, error) {
	defer s.dropAuthor(id)
	return s.Store.UpdateUser(ctx, id, name, bio)
}

func (s *Store) Follow(ctx context.Context, followerID, followedID string) (store.Follow, error) {
	defer s.dropAuthor(followerID, followedID)
	return s.Store.Follow(ctx, followerID, followedID)
}

func (s *Store) Unfollow(ctx context.Context, followerID, followedID string) (*store.Follow, error) {
	defer s.dropAuthor(followerID, followedID)
	return s.Store.Unfollow(ctx, followerID, followedID)
}

func (s *Store) PublishPost(ctx context.Context, callerID, id string) (store.Post, error) {
	defer s.drop(id)
	return s.Store.PublishPost(ctx, callerID, id)
}

func (s *Store) UpdatePost(ctx context.Context, callerID, id string, edit store.PostEdit) (store.Post, error) {
	defer s.drop(id)
	return s.Store.UpdatePost(ctx, callerID, id, edit)
}

func (s *Store) DeletePost(ctx context.Context, callerID, id string) (store.Post, error) {
	defer s.drop(id)
	return s.Store.DeletePost(ctx, callerID, id)
}

func (s *Store) CreateComment(ctx context.Context, authorID, postID, body string) (store.Comment, error) {
	defer s.drop(postID)
	return s.Store.CreateComment(ctx, authorID, postID, body)
}

func (s *Store) DeleteComment(ctx context.Context, callerID, postID, id string) (store.Comment, error) {
	defer s.drop(postID)
	return s.Store.DeleteComment(ctx, callerID, postID, id)
}

func (s *Store) LikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error) {
	defer s.drop(postID)
	return s.Store.LikePost(ctx, userID, postID, attrs)
}

func (s *Store) UnlikePost(ctx context.Context, userID, postID string, attrs []string) (store.Post, error) {
	defer s.drop(postID)
	return s.Store.UnlikePost(ctx, userID, postID, attrs)
}
