package feed

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The feeds, kept from the table's stream (applied by lambda/projector): a
// published post (created published, or a draft published) enters the
// feed of each of its author's followers, a deleted post leaves them; a
// follow brings the followed user's latest posts (followBackfill) into the
// follower's feed, an unfollow takes every entry of that user out of it.
//
// Every write is idempotent (an entry's key is its reader and its post's
// place, so a record applied twice writes the same item), and a record never
// brings back what a later change removed: before adding, it checks the
// table as it is now (the post still published, the follow still there,
// both strongly consistent reads). What it removes late, or adds in a race
// with a change on another item (a post fanned out while its author is
// unfollowed), Feed leaves out at read time, which checks each entry's post
// and follow: the projection only has to converge.

// followBackfill is how many of a user's latest posts a new follow brings
// into the follower's feed: one full page of it, so that a new follow shows
// at once; older ones the follower finds on the user's own page.
const followBackfill = 20

// Follows is what the projection reads of the core's items: every follower
// of a user, whether a follow stands, whether a post is published (strongly
// consistent reads; store.Store has them).
type Follows interface {
	FollowerIDs(ctx context.Context, userID string) ([]string, error)
	Follows(ctx context.Context, followerID, followedID string) (bool, error)
	PublishedPost(ctx context.Context, postID string) (bool, error)
}

// Projection applies the stream's records of posts and follows
// (StreamFilters) to the feeds: a projector.Projection.
type Projection struct {
	table     *Table
	core      Follows
	now       func() time.Time
	threshold int      // pullThreshold, but in tests
	pulled    sync.Map // author ID -> true: read pulled (reach)
}

// Option configures a Projection.
type Option func(*Projection)

// WithPullThreshold sets the follower count past which an author's posts
// are read at read time rather than fanned out (tests use a small one).
func WithPullThreshold(n int) Option { return func(p *Projection) { p.threshold = n } }

// NewProjection returns the projection of s's stream onto its feeds.
func NewProjection(s *store.Store, opts ...Option) *Projection {
	p := &Projection{table: NewTable(s), core: s, now: time.Now, threshold: pullThreshold}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Apply applies one record; the others (comments, likes, counters,
// profiles) are not the feed's, and change nothing.
func (p *Projection) Apply(ctx context.Context, r events.DynamoDBEventRecord) error {
	if id := r.UserIdentity; id != nil && id.Type == "Service" {
		return nil // a TTL deletion: an entry expiring, nothing to project
	}
	pk, sk := projector.ImageString(r.Change.Keys, "pk"), projector.ImageString(r.Change.Keys, "sk")
	switch {
	case strings.HasPrefix(pk, store.PostPK("")) && sk == store.SKMetadata:
		return p.post(ctx, r.Change.OldImage, r.Change.NewImage)
	case strings.HasPrefix(pk, store.UserPK("")) && strings.HasPrefix(sk, store.FollowsPrefix):
		return p.follow(ctx, r.EventName, r.Change.OldImage, r.Change.NewImage)
	}
	return nil
}

func (p *Projection) post(ctx context.Context, old, new map[string]events.DynamoDBAttributeValue) error {
	was, is := projector.PublishedPlace(old), projector.PublishedPlace(new)
	if was != "" && was != is { // deleted (or moved): out of every follower's feed
		if err := p.fanOut(ctx, projector.ImageString(old, "authorId"), Entry{Place: was, PostID: projector.ImageString(old, "id"), AuthorID: projector.ImageString(old, "authorId")}, false); err != nil {
			return err
		}
	}
	if is != "" && is != was { // published: into every follower's feed, if it still is
		id := projector.ImageString(new, "id")
		published, err := p.core.PublishedPost(ctx, id)
		if err != nil || !published {
			return err
		}
		return p.fanOut(ctx, projector.ImageString(new, "authorId"), Entry{Place: is, PostID: id, AuthorID: projector.ImageString(new, "authorId")}, true)
	}
	return nil
}

// fanOut writes (or deletes) entry in the feed of each of author's
// followers, unless the author is read at read time (a high-follower
// author: the feeds merge its posts, and a new post's counter goes on GSI1
// beside it, where they read its counts; entries of its posts from before
// it was marked are left to the feeds' read checks and TTL).
func (p *Projection) fanOut(ctx context.Context, author string, entry Entry, add bool) error {
	reach, err := p.reach(ctx, author)
	if err != nil {
		return err
	}
	if reach.Pulled {
		if add {
			return p.table.IndexCounters(ctx, author, []Entry{entry})
		}
		return nil // its counter went with it
	}
	followers, err := p.core.FollowerIDs(ctx, author)
	if err != nil {
		return err
	}
	expires, err := expiry(entry.Place)
	if err != nil {
		return err
	}
	if add && expires < p.now().Unix() {
		return nil // older than the feed's window: nothing to add
	}
	entries := make([]Entry, len(followers))
	for i, f := range followers {
		entries[i] = entry
		entries[i].Reader, entries[i].Expires = f, expires
	}
	if add {
		return p.table.PutEntries(ctx, entries)
	}
	return p.table.DeleteEntries(ctx, entries)
}

func (p *Projection) follow(ctx context.Context, event string, old, new map[string]events.DynamoDBAttributeValue) error {
	switch event {
	case "INSERT":
		return p.followed(ctx, projector.ImageString(new, "followerId"), projector.ImageString(new, "followedId"))
	case "REMOVE":
		return p.unfollowed(ctx, projector.ImageString(old, "followerId"), projector.ImageString(old, "followedId"))
	}
	return nil
}

// followed brings followed's latest posts into follower's feed (or its
// marker, for a high-follower author), and pulls the author when this
// follow takes it past the threshold.
func (p *Projection) followed(ctx context.Context, follower, followed string) error {
	if ok, err := p.core.Follows(ctx, follower, followed); err != nil || !ok {
		return err // unfollowed since: nothing to bring
	}
	reach, err := p.reach(ctx, followed)
	if err != nil {
		return err
	}
	if reach.Pulled { // read at read time: the reader's marker is all it needs
		return p.table.PutPullMarkers(ctx, followed, []string{follower})
	}
	latest, err := p.table.PublishedSince(ctx, followed, p.now().Add(-TTL), followBackfill)
	if err != nil {
		return err
	}
	if err := p.addForReader(ctx, follower, latest); err != nil {
		return err
	}
	if reach.Followers >= p.threshold { // this follow takes the author past the threshold
		return p.pull(ctx, followed)
	}
	return nil
}

// unfollowed takes out of follower's feed what it holds of followed, not
// what the author has now: a post deleted meanwhile, whose deletion was
// fanned out to the followers of its time, may still be there.
func (p *Projection) unfollowed(ctx context.Context, follower, followed string) error {
	if err := p.table.DeletePullMarker(ctx, follower, followed); err != nil {
		return err
	}
	held, err := p.table.EntriesBy(ctx, follower, followed)
	if err != nil || len(held) == 0 {
		return err
	}
	again, err := p.core.Follows(ctx, follower, followed)
	if err != nil {
		return err
	}
	if again { // followed again since: what is still published stays, but a post deleted meanwhile goes
		if held, err = p.unpublished(ctx, held); err != nil || len(held) == 0 {
			return err
		}
	}
	return p.table.DeleteEntries(ctx, held)
}

// unpublished returns the entries whose post is gone or no longer
// published (strongly consistent reads: a deletion that was fanned out
// while the reader did not follow its author never reached this feed).
func (p *Projection) unpublished(ctx context.Context, entries []Entry) ([]Entry, error) {
	var out []Entry
	for _, e := range entries {
		published, err := p.core.PublishedPost(ctx, e.PostID)
		if err != nil {
			return nil, err
		}
		if !published {
			out = append(out, e)
		}
	}
	return out, nil
}

// reach is the author's reach, read unless the projection has read it
// pulled before: an author stays pulled, and a celebrity's every follow
// reading its counter would put a read unit a follow on its partition.
func (p *Projection) reach(ctx context.Context, author string) (Reach, error) {
	if _, ok := p.pulled.Load(author); ok {
		return Reach{Pulled: true}, nil
	}
	r, err := p.table.Reach(ctx, author)
	if err == nil && r.Pulled {
		p.pulled.Store(author, true)
	}
	return r, err
}

// pull turns the author's feeds to read time: a marker in each follower's
// feed, the counters of the author's posts in the feed's window on GSI1,
// then the author's mark (last, so that a redelivery after a crash writes
// the markers and counters again; until the mark, posts are still fanned
// out, and the feeds drop the duplicates).
func (p *Projection) pull(ctx context.Context, author string) error {
	followers, err := p.core.FollowerIDs(ctx, author)
	if err != nil {
		return err
	}
	if err := p.table.PutPullMarkers(ctx, author, followers); err != nil {
		return err
	}
	posts, err := p.table.PublishedSince(ctx, author, p.now().Add(-TTL), 0)
	if err != nil {
		return err
	}
	if err := p.table.IndexCounters(ctx, author, posts); err != nil {
		return err
	}
	return p.table.MarkPulled(ctx, author)
}

// addForReader writes entries (of posts, by place) into reader's feed.
func (p *Projection) addForReader(ctx context.Context, reader string, entries []Entry) error {
	for i := range entries {
		expires, err := expiry(entries[i].Place)
		if err != nil {
			return err
		}
		entries[i].Reader, entries[i].Expires = reader, expires
	}
	if len(entries) == 0 {
		return nil
	}
	return p.table.PutEntries(ctx, entries)
}

// expiry is when an entry of the post at place expires: its publication
// time (the ULID's) plus the feed's window.
func expiry(place string) (int64, error) {
	id, err := ulid.ParseStrict(strings.TrimPrefix(place, store.PostPrefix))
	if err != nil {
		return 0, fmt.Errorf("a post's place %q holds no ULID: %w", place, err)
	}
	return ulid.Time(id.Time()).Add(TTL).Unix(), nil
}
