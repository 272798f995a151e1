// Package projector keeps the readers' feeds (store.Feed) from the table's
// stream: a published post (created published, or a draft published)
// enters the feed of each of its author's followers, a deleted post leaves
// them; a follow brings the followed user's latest posts
// (store.FollowBackfill) into the follower's feed, an unfollow takes every
// entry of that user out of it.
//
// Every write is idempotent (an entry's key is its reader and its post's
// place, so a record applied twice writes the same item), and a record never
// brings back what a later change removed: before adding, it checks the
// table as it is now (the post still published, the follow still there,
// both strongly consistent reads). What it removes late, or adds in a race
// with a change on another item (a post fanned out while its author is
// unfollowed), Feed leaves out at read time, which checks each entry's post
// and follow: the projector only has to converge.
package projector

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
)

// TableActions are the DynamoDB operations the projector performs on the
// table (a post's counter, a follow: GetItem; an author's reach and the
// entries of a reader's feed: Query; the entries and markers it writes and
// deletes: BatchWriteItem; an author's mark and the counters it puts on
// GSI1: UpdateItem), and IndexActions those on its indexes (an author's
// followers on GSI2, posts on GSI1). The stack grants exactly these;
// TestTheProjectorDoesWhatItsRoleGrants records them.
var (
	TableActions = []string{"dynamodb:BatchWriteItem", "dynamodb:GetItem", "dynamodb:Query", "dynamodb:UpdateItem"}
	IndexActions = []string{"dynamodb:Query"}
)

// Store is what the projector needs of the table.
type Store interface {
	FollowerIDs(ctx context.Context, userID string) ([]string, error)
	PublishedSince(ctx context.Context, authorID string, since time.Time, limit int) ([]store.FeedEntry, error)
	PutFeedEntries(ctx context.Context, entries []store.FeedEntry) error
	DeleteFeedEntries(ctx context.Context, entries []store.FeedEntry) error
	FeedEntriesBy(ctx context.Context, readerID, authorID string) ([]store.FeedEntry, error)
	Follows(ctx context.Context, followerID, followedID string) (bool, error)
	PublishedPost(ctx context.Context, postID string) (bool, error)
	Reach(ctx context.Context, authorID string) (store.AuthorReach, error)
	MarkPulled(ctx context.Context, authorID string) error
	IndexCounters(ctx context.Context, authorID string, posts []store.FeedEntry) error
	ApplyTallies(ctx context.Context, parent string, tallies map[int]store.ShardTally) error
	PutPullMarkers(ctx context.Context, authorID string, readers []string) error
	DeletePullMarker(ctx context.Context, readerID, authorID string) error
}

// Projector applies stream records to the feeds.
type Projector struct {
	store     Store
	log       *slog.Logger
	now       func() time.Time
	threshold int      // store.PullThreshold, but in tests
	pulled    sync.Map // author ID -> true: read pulled (reach)
}

// Option configures a Projector.
type Option func(*Projector)

// WithPullThreshold sets the follower count past which an author's posts
// are read at read time rather than fanned out (tests use a small one).
func WithPullThreshold(n int) Option { return func(p *Projector) { p.threshold = n } }

// New returns a projector writing to s.
func New(s Store, log *slog.Logger, opts ...Option) *Projector {
	p := &Projector{store: s, log: log, now: time.Now, threshold: store.PullThreshold}
	for _, o := range opts {
		o(p)
	}
	return p
}

// reserve is the time Handle keeps before its deadline: it starts no record
// later than that, and reports the rest as not applied.
const reserve = 500 * time.Millisecond

// Handle applies the records in order. It reports (batchItemFailures) the
// sequence number of the first record it could not apply, or did not reach
// before its deadline: Lambda sends that record and every one after it
// again, and the records before it are done.
//
// Each invocation ends with one cost line (see logCost).
func (p *Projector) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	start := time.Now()
	ctx, meter := cost.WithMeter(ctx)
	applied := 0
	defer func() { p.logCost(len(ev.Records), applied, meter.Summary(), time.Since(start)) }()
	deadline, hasDeadline := ctx.Deadline()
	// Hot posts' and users' shard counts first, one write per post or user
	// for the whole batch (a record each would put a write unit per like
	// or follow on its partition): a failure is reported at its first
	// record.
	failAt := len(ev.Records)
	tallies, first := tallies(ev.Records)
	for _, parent := range slices.Sorted(maps.Keys(tallies)) {
		if err := p.store.ApplyTallies(ctx, parent, tallies[parent]); err != nil {
			p.log.Error("shard counts not applied", "parent", parent, "cause", err.Error())
			failAt = min(failAt, first[parent])
		}
	}
	for _, r := range ev.Records[:failAt] {
		if hasDeadline && time.Until(deadline) < reserve {
			p.log.Warn("stopping before the deadline", "unapplied", r.Change.SequenceNumber)
			return failedFrom(r), nil
		}
		if err := p.apply(ctx, r); err != nil {
			p.log.Error("record not applied", "sequenceNumber", r.Change.SequenceNumber, "eventName", r.EventName, "cause", err.Error())
			return failedFrom(r), nil
		}
		applied++
	}
	if failAt < len(ev.Records) {
		return failedFrom(ev.Records[failAt]), nil
	}
	return events.DynamoDBEventResponse{}, nil
}

// tallies reads the batch's records of shard counters: by the partition of
// their hot post or user, each shard's latest counts (the highest
// version), and the index of its first such record.
func tallies(records []events.DynamoDBEventRecord) (map[string]map[int]store.ShardTally, map[string]int) {
	out, first := map[string]map[int]store.ShardTally{}, map[string]int{}
	for i, r := range records {
		img := r.Change.NewImage
		if str(r.Change.Keys, "sk") != store.SKShard || img == nil {
			continue // not a shard counter, or its deletion (with its post)
		}
		parent, ok := store.ShardParent(str(r.Change.Keys, "pk"))
		shard, ok1 := num(img, "shard")
		version, ok2 := num(img, "version")
		if !ok || !ok1 || !ok2 {
			continue
		}
		likes, _ := num(img, "likeCount")
		comments, _ := num(img, "commentCount")
		followers, _ := num(img, "followerCount")
		if out[parent] == nil {
			out[parent], first[parent] = map[int]store.ShardTally{}, i
		}
		if t, seen := out[parent][int(shard)]; !seen || t.Version < version {
			out[parent][int(shard)] = store.ShardTally{Likes: int(likes), Comments: int(comments), Followers: int(followers), Version: version}
		}
	}
	return out, first
}

func num(img map[string]events.DynamoDBAttributeValue, name string) (int64, bool) {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeNumber {
		return 0, false
	}
	n, err := v.Integer()
	return n, err == nil
}

// MetricsNamespace is the CloudWatch namespace of the projector's cost
// metrics, whose one dimension is MetricsDimension ("projector").
const (
	MetricsNamespace = "AppSyncDynamoFeed"
	MetricsDimension = "Function"
)

// Metrics are the metrics of each invocation's cost line, by name, with
// their unit: the stack's dashboard draws them.
var Metrics = []struct{ Name, Unit string }{
	{"Records", "Count"}, {"Applied", "Count"},
	{"DynamoDBRequests", "Count"}, {"WriteCapacityUnits", "Count"},
	{"ReadCapacityUnits", "Count"}, {"Duration", "Milliseconds"},
}

// logCost writes the invocation's cost as one log line in CloudWatch
// Embedded Metric Format: the records sent and applied, the DynamoDB
// requests by operation, the capacity units and the duration.
func (p *Projector) logCost(records, applied int, sum cost.Summary, took time.Duration) {
	metrics := make([]map[string]string, len(Metrics))
	for i, m := range Metrics {
		metrics[i] = map[string]string{"Name": m.Name, "Unit": m.Unit}
	}
	requests := 0
	for _, n := range sum.Requests {
		requests += n
	}
	p.log.Info("invocation",
		slog.Any("_aws", map[string]any{"Timestamp": time.Now().UnixMilli(), "CloudWatchMetrics": []map[string]any{{
			"Namespace": MetricsNamespace, "Dimensions": [][]string{{MetricsDimension}}, "Metrics": metrics,
		}}}),
		MetricsDimension, "projector", "Records", records, "Applied", applied, "DynamoDBRequests", requests,
		"Requests", sum.Requests, "WriteCapacityUnits", sum.Write, "ReadCapacityUnits", sum.Read,
		"Duration", float64(took.Microseconds())/1000)
}

func failedFrom(r events.DynamoDBEventRecord) events.DynamoDBEventResponse {
	return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: r.Change.SequenceNumber}}}
}

// apply applies one record.
func (p *Projector) apply(ctx context.Context, r events.DynamoDBEventRecord) error {
	if id := r.UserIdentity; id != nil && id.Type == "Service" {
		return nil // a TTL deletion: an entry expiring, nothing to project
	}
	pk, sk := str(r.Change.Keys, "pk"), str(r.Change.Keys, "sk")
	switch {
	case strings.HasPrefix(pk, "POST#") && sk == store.SKMetadata:
		return p.post(ctx, r.Change.OldImage, r.Change.NewImage)
	case strings.HasPrefix(pk, "USER#") && strings.HasPrefix(sk, store.FollowsPrefix):
		return p.follow(ctx, r.EventName, r.Change.OldImage, r.Change.NewImage)
	}
	return nil // comments, likes, counters, profiles: not the feed's; shard counters: applied by batch (tallies)
}

// place returns a post image's place in its author's posts when it is
// published ("" otherwise).
func place(img map[string]events.DynamoDBAttributeValue) string {
	if img == nil || str(img, "status") == store.StatusDraft {
		return ""
	}
	if sk := str(img, "gsi1sk"); strings.HasPrefix(sk, store.PostPrefix) {
		return sk
	}
	return ""
}

func (p *Projector) post(ctx context.Context, old, new map[string]events.DynamoDBAttributeValue) error {
	was, is := place(old), place(new)
	if was != "" && was != is { // deleted (or moved): out of every follower's feed
		if err := p.fanOut(ctx, str(old, "authorId"), store.FeedEntry{Place: was, PostID: str(old, "id"), AuthorID: str(old, "authorId")}, false); err != nil {
			return err
		}
	}
	if is != "" && is != was { // published: into every follower's feed, if it still is
		id := str(new, "id")
		published, err := p.store.PublishedPost(ctx, id)
		if err != nil || !published {
			return err
		}
		return p.fanOut(ctx, str(new, "authorId"), store.FeedEntry{Place: is, PostID: id, AuthorID: str(new, "authorId")}, true)
	}
	return nil
}

// fanOut writes (or deletes) entry in the feed of each of author's
// followers, unless the author is read at read time (a high-follower
// author: the feeds merge its posts, and a new post's counter goes on GSI1
// beside it, where they read its counts; entries of its posts from before
// it was marked are left to the feeds' read checks and TTL).
func (p *Projector) fanOut(ctx context.Context, author string, entry store.FeedEntry, add bool) error {
	reach, err := p.reach(ctx, author)
	if err != nil {
		return err
	}
	if reach.Pulled {
		if add {
			return p.store.IndexCounters(ctx, author, []store.FeedEntry{entry})
		}
		return nil // its counter went with it
	}
	followers, err := p.store.FollowerIDs(ctx, author)
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
	entries := make([]store.FeedEntry, len(followers))
	for i, f := range followers {
		entries[i] = entry
		entries[i].Reader, entries[i].Expires = f, expires
	}
	if add {
		return p.store.PutFeedEntries(ctx, entries)
	}
	return p.store.DeleteFeedEntries(ctx, entries)
}

func (p *Projector) follow(ctx context.Context, event string, old, new map[string]events.DynamoDBAttributeValue) error {
	switch event {
	case "INSERT":
		follower, followed := str(new, "followerId"), str(new, "followedId")
		if ok, err := p.store.Follows(ctx, follower, followed); err != nil || !ok {
			return err // unfollowed since: nothing to bring
		}
		reach, err := p.reach(ctx, followed)
		if err != nil {
			return err
		}
		if reach.Pulled { // read at read time: the reader's marker is all it needs
			return p.store.PutPullMarkers(ctx, followed, []string{follower})
		}
		latest, err := p.store.PublishedSince(ctx, followed, p.now().Add(-store.FeedTTL), store.FollowBackfill)
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
	case "REMOVE":
		// What the feed holds of the author, not what the author has now: a
		// post deleted meanwhile, whose deletion was fanned out to the
		// followers of its time, may still be there.
		if err := p.store.DeletePullMarker(ctx, str(old, "followerId"), str(old, "followedId")); err != nil {
			return err
		}
		held, err := p.store.FeedEntriesBy(ctx, str(old, "followerId"), str(old, "followedId"))
		if err != nil || len(held) == 0 {
			return err
		}
		again, err := p.store.Follows(ctx, str(old, "followerId"), str(old, "followedId"))
		if err != nil {
			return err
		}
		if again { // followed again since: what is still published stays, but a post deleted meanwhile goes
			if held, err = p.unpublished(ctx, held); err != nil || len(held) == 0 {
				return err
			}
		}
		return p.store.DeleteFeedEntries(ctx, held)
	}
	return nil
}

// unpublished returns the entries whose post is gone or no longer
// published (strongly consistent reads: a deletion that was fanned out
// while the reader did not follow its author never reached this feed).
func (p *Projector) unpublished(ctx context.Context, entries []store.FeedEntry) ([]store.FeedEntry, error) {
	var out []store.FeedEntry
	for _, e := range entries {
		published, err := p.store.PublishedPost(ctx, e.PostID)
		if err != nil {
			return nil, err
		}
		if !published {
			out = append(out, e)
		}
	}
	return out, nil
}

// reach is the author's reach, read unless the projector has read it pulled
// before: an author stays pulled, and a celebrity's every follow reading
// its counter would put a read unit a follow on its partition.
func (p *Projector) reach(ctx context.Context, author string) (store.AuthorReach, error) {
	if _, ok := p.pulled.Load(author); ok {
		return store.AuthorReach{Pulled: true}, nil
	}
	r, err := p.store.Reach(ctx, author)
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
func (p *Projector) pull(ctx context.Context, author string) error {
	followers, err := p.store.FollowerIDs(ctx, author)
	if err != nil {
		return err
	}
	if err := p.store.PutPullMarkers(ctx, author, followers); err != nil {
		return err
	}
	posts, err := p.store.PublishedSince(ctx, author, p.now().Add(-store.FeedTTL), 0)
	if err != nil {
		return err
	}
	if err := p.store.IndexCounters(ctx, author, posts); err != nil {
		return err
	}
	return p.store.MarkPulled(ctx, author)
}

// addForReader writes entries (of posts, by place) into reader's feed.
func (p *Projector) addForReader(ctx context.Context, reader string, entries []store.FeedEntry) error {
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
	return p.store.PutFeedEntries(ctx, entries)
}

// expiry is when an entry of the post at place expires: its publication
// time (the ULID's) plus the feed's window.
func expiry(place string) (int64, error) {
	id, err := ulid.ParseStrict(strings.TrimPrefix(place, store.PostPrefix))
	if err != nil {
		return 0, fmt.Errorf("a post's place %q holds no ULID: %w", place, err)
	}
	return ulid.Time(id.Time()).Add(store.FeedTTL).Unix(), nil
}

func str(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}
