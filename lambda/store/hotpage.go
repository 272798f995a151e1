package store

// A hot post's page, kept in memory. A post read by many at once has
// turned hot (its likes and comments spread over shards: hot.go), and its
// page (the post with its counts, the first page of its comments in each
// order and range, those comments' authors) is read from the table by each
// execution environment at most once per HotPageTTL: the readers of one
// environment share what it read, and concurrent misses wait for one read.
// What is kept are the table's items, never an answer: what a caller may
// see (a draft, an email, likedByMe) is decided per request as for any
// post. An environment drops a post's page when it writes the post itself
// (an edit, a deletion, a comment, a like); the others serve it up to the
// TTL late. Posts not known hot, and reads that must be consistent (a
// mutation's answers), read the table as ever.

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/kept"
)

// HotPageTTL is how long an environment serves a hot post's page from
// memory: a reader in another environment sees a comment, a like or an
// edit at most this late, and a deleted post is served at most this long.
const HotPageTTL = 5 * time.Second

// maxHotPages bounds the hot posts an environment keeps pages of (the
// largest post's page is about 100 kB: docs/capacity.md).
const maxHotPages = 64

// WithHotPageTTL sets how long hot posts' pages are kept (HotPageTTL by
// default; 0 keeps none), for tests.
func WithHotPageTTL(ttl time.Duration) Option { return func(s *Store) { s.pages.ttl = ttl } }

// hotPages is an environment's hot posts' pages, by post ID, and the
// authors of their comments, by user ID.
type hotPages struct {
	ttl     time.Duration
	mu      sync.Mutex
	posts   map[string]*hotPage
	authors map[string]*kept.Value[User]
}

// hotPage is what is kept of one hot post: the post and its counts, and its
// first pages of comments by shape (order, range, limit).
type hotPage struct {
	post     *kept.Value[Post]
	comments map[string]*kept.Value[Page[Comment]]
}

func newHotPages() *hotPages {
	return &hotPages{ttl: HotPageTTL, posts: map[string]*hotPage{}, authors: map[string]*kept.Value[User]{}}
}

// page returns postID's entry, made when absent (the oldest dropped past
// maxHotPages); the caller holds mu.
func (h *hotPages) page(postID string) *hotPage {
	p := h.posts[postID]
	if p == nil {
		if len(h.posts) >= maxHotPages {
			h.dropOldest()
		}
		p = &hotPage{comments: map[string]*kept.Value[Page[Comment]]{}}
		h.posts[postID] = p
	}
	return p
}

func (h *hotPages) dropOldest() {
	oldest, at := "", time.Time{}
	for id, p := range h.posts {
		if p.post != nil && (oldest == "" || p.post.At.Before(at)) {
			oldest, at = id, p.post.At
		}
	}
	if oldest == "" {
		for id := range h.posts {
			oldest = id
			break
		}
	}
	delete(h.posts, oldest)
}

// drop forgets what is kept of the post (its writer's own environment sees
// its write at once).
func (h *hotPages) drop(postID string) {
	h.mu.Lock()
	delete(h.posts, postID)
	h.mu.Unlock()
}

// dropAuthor forgets the users as comments' authors.
func (h *hotPages) dropAuthor(userIDs ...string) {
	h.mu.Lock()
	for _, id := range userIDs {
		delete(h.authors, id)
	}
	h.mu.Unlock()
}

// through is kept.Through on h's values, under h.mu, for the TTL.
func through[T any](ctx context.Context, s *Store, get func() *kept.Value[T], set func(*kept.Value[T]), read func(context.Context) (T, error)) (T, error) {
	v, err := kept.Through(ctx, &s.pages.mu, s.now, s.pages.ttl, get, set, read)
	if errors.Is(err, kept.ErrWaitCut) {
		err = Fail("store.hotPage", err)
	}
	return v, err
}

// keepsPage reports whether a read of the post goes through its kept page:
// it is known hot, pages are kept, and the read need not be consistent.
func (s *Store) keepsPage(ctx context.Context, postID string) bool {
	return s.pages.ttl > 0 && s.hot.of(postID) > 0 && !consistentReads(ctx)
}

// hotPost is Post of a hot post, through its kept page.
func (s *Store) hotPost(ctx context.Context, postID string) (Post, error) {
	return through(ctx, s,
		func() *kept.Value[Post] { return s.pages.page(postID).post },
		func(k *kept.Value[Post]) { s.pages.page(postID).post = k },
		func(ctx context.Context) (Post, error) {
			var p Post
			return p, getCounted(ctx, s, "store.Post", PostPK, postID, "post not found", &p)
		})
}

// hotComments is CommentsOnPost of a hot post's first page (no token),
// through its kept page: the page is read whole (every attribute, no byte
// budget) and given as page asks for it (its attributes, its bytes).
func (s *Store) hotComments(ctx context.Context, postID string, page PageRequest) (Page[Comment], error) {
	q := commentsOnPost(postID).shaped(page, "")
	whole := page
	whole.Attributes, whole.MaxBytes = nil, 0
	key := q.scope.Args + "|" + strconv.Itoa(page.Limit)
	read, err := through(ctx, s,
		func() *kept.Value[Page[Comment]] { return s.pages.page(postID).comments[key] },
		func(k *kept.Value[Page[Comment]]) { s.pages.page(postID).comments[key] = k },
		func(ctx context.Context) (Page[Comment], error) { return commentsOfPosts.page(ctx, s, q, whole) })
	if err != nil {
		return Page[Comment]{}, err
	}
	out := read
	out.Items = slices.Clone(read.Items)
	for i := range out.Items {
		readOnly(&out.Items[i], page.Attributes)
	}
	return out.Fit(page.MaxBytes)
}

// HotAuthors returns the users with the given IDs, as Users does, for the
// comments of the hot post postID: through what is kept of its authors
// (each read at most once a TTL, concurrent misses waiting for one read)
// when the post is known hot, otherwise from the table as Users does.
func (s *Store) HotAuthors(ctx context.Context, postID string, ids []string, counts bool) (map[string]User, error) {
	if !s.keepsPage(ctx, postID) {
		return s.Users(ctx, ids, counts)
	}
	out := make(map[string]User, len(ids))
	claimed, waiting := s.pages.claimAuthors(s.now(), ids, out)
	if len(claimed) > 0 {
		start := s.now()
		read, err := s.Users(ctx, slices.Collect(maps.Keys(claimed)), true) // with counts: what any selection reads
		s.pages.keepAuthors(start, claimed, read, err)
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
			return nil, Fail("store.HotAuthors", ctx.Err())
		}
		switch s.pages.mu.Lock(); {
		case k.Err == nil:
			out[id] = k.V
		case k.Err != errAbsent:
			again = append(again, id)
		}
		s.pages.mu.Unlock()
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
			u.uncounted = true
			out[id] = u
		}
	}
	return out, nil
}

// claimAuthors puts into out the kept authors of ids read within the TTL,
// and returns those it claims to read (a pending entry made for each) and
// those another read is reading.
func (h *hotPages) claimAuthors(now time.Time, ids []string, out map[string]User) (claimed map[string]*kept.Value[User], waiting map[string]pending) {
	claimed, waiting = map[string]*kept.Value[User]{}, map[string]pending{}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		switch k := h.authors[id]; {
		case k != nil && k.Ready != nil:
			waiting[id] = pending{k, k.Ready}
		case k != nil && now.Sub(k.At) < h.ttl:
			if k.Err == nil {
				out[id] = k.V
			}
		case claimed[id] == nil:
			if len(h.authors) >= maxHotPages*MaxLimit {
				clear(h.authors)
			}
			k = &kept.Value[User]{Ready: make(chan struct{})}
			h.authors[id], claimed[id] = k, k
		}
	}
	return claimed, waiting
}

// pending is an author another read is reading, and what closes when it
// is done.
type pending struct {
	k     *kept.Value[User]
	ready chan struct{}
}

// keepAuthors keeps what a read of the claimed authors found, as of start
// (an absent one as absent); a failed read keeps nothing.
func (h *hotPages) keepAuthors(start time.Time, claimed map[string]*kept.Value[User], read map[string]User, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for id, k := range claimed {
		u, found := read[id]
		switch {
		case err != nil:
			k.Err = err
			if h.authors[id] == k {
				delete(h.authors, id)
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
var errAbsent = errs.E("store.HotAuthors", errs.NotFound, "user not found")

// KnowsHot reports whether the store knows the post is hot: its page's
// reads are kept (Post, CommentsOnPost's first pages, HotAuthors); with ""
// whether it knows any post hot.
func (s *Store) KnowsHot(postID string) bool {
	if postID == "" {
		return s.hot.any()
	}
	return s.hot.of(postID) > 0
}
