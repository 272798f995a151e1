package store

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// The feed. A reader's feed is a partition of entries (FeedPK), one per
// published post of a user the reader follows, written by the projector from
// the table's stream (lambda/projector) and read by Feed. An entry holds
// only what finds its post (its ID, its author); the post itself is read
// with the page, so that a post's update, comment or like costs no write in
// its readers' feeds.

// FeedTTL is how long an entry stays: DynamoDB's TTL deletes it after that
// (within a few days more). A feed lists the posts of the last 30 days.
const FeedTTL = 30 * 24 * time.Hour

// FollowBackfill is how many of a user's latest posts a new follow brings
// into the follower's feed: one full page of it, so that a new follow shows
// at once; older ones the follower finds on the user's own page.
const FollowBackfill = 20

// The feed projector's event source (the stack deploys it, and make dev's
// poller applies it): up to FeedStreamBatchSize records an invocation, a
// failed batch bisected and retried FeedStreamRetries times, then left to
// the on-failure destination; and FeedStreamFilters, its filter criteria,
// as Lambda's event filtering reads them (one pattern per filter; a record
// matching any is delivered): a post's own item, a follow, and a hot post's
// or user's shard counter. The rest (comments, likes, counters, profiles, the feed's
// own entries and their TTL deletions) never invoke the projector.
const (
	FeedStreamBatchSize = 100
	FeedStreamRetries   = 5
)

var FeedStreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		AttrPK: map[string]any{"S": []any{map[string]any{"prefix": prefixPost}}},
		AttrSK: map[string]any{"S": []any{SKMetadata}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{
		AttrPK: map[string]any{"S": []any{map[string]any{"prefix": prefixUser}}},
		AttrSK: map[string]any{"S": []any{map[string]any{"prefix": prefixFollows}}},
	}}},
	{"dynamodb": map[string]any{"Keys": map[string]any{ // a hot post's or user's shard counter: its counts to copy (hot.go)
		AttrSK: map[string]any{"S": []any{SKShard}},
	}}},
}

// FeedEntry is one post in one reader's feed.
type FeedEntry struct {
	Reader   string `dynamodbav:"-"`
	Place    string `dynamodbav:"-"` // the post's GSI1 sort key: PublishedSK(...)
	PostID   string `dynamodbav:"postId"`
	AuthorID string `dynamodbav:"authorId"`
	// Expires is the entry's TTL, in seconds since the epoch.
	Expires int64 `dynamodbav:"ttl"`
}

type feedItem struct {
	PK string `dynamodbav:"pk"`
	SK string `dynamodbav:"sk"`
	FeedEntry
}

func (e FeedEntry) key() itemKey { return itemKey{FeedPK(e.Reader), e.Place} }

// feedOf reads a reader's entries, newest first.
func feedOf(readerID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Query.feed", Parent: readerID}, pk: FeedPK(readerID), skPrefix: PostPrefix, newestFirst: true}
}

// PutFeedEntries writes the entries (BatchWriteItem, 25 a request; the same
// entry written again is the same item).
func (s *Store) PutFeedEntries(ctx context.Context, entries []FeedEntry) error {
	const op = "store.PutFeedEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := checkIDs(op, e.Reader, e.PostID, e.AuthorID); err != nil {
			return err
		}
		av, err := marshal(op, feedItem{PK: FeedPK(e.Reader), SK: e.Place, FeedEntry: e})
		if err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: av}}
	}
	return s.batchWrite(ctx, op, writes)
}

// DeleteFeedEntries deletes the entries (absent ones are no error).
func (s *Store) DeleteFeedEntries(ctx context.Context, entries []FeedEntry) error {
	const op = "store.DeleteFeedEntries"
	writes := make([]types.WriteRequest, len(entries))
	for i, e := range entries {
		if err := checkIDs(op, e.Reader); err != nil {
			return err
		}
		writes[i] = deleteRequest(e.key())
	}
	return s.batchWrite(ctx, op, writes)
}

// FollowerIDs returns every follower of the user: Query pages of GSI2's
// keys, of its shards too when it is hot (its marker, read first, says so).
func (s *Store) FollowerIDs(ctx context.Context, userID string) ([]string, error) {
	const op = "store.FollowerIDs"
	if err := checkIDs(op, userID); err != nil {
		return nil, err
	}
	var ids []string
	shards := 0
	for n := -1; n < shards; n++ {
		pk := FollowersPK(userID)
		if n >= 0 {
			pk = FollowersShardPK(userID, n)
		}
		in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI2)}
		if err := keyQuery(in, partition(AttrGSI2PK, pk), []string{AttrGSI2SK}); err != nil {
			return nil, err
		}
		err := s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
			switch sk := stringAttr(item, AttrGSI2SK); {
			case sk == HotFollowerSK:
				shards = HotShards
			case sk != "":
				ids = append(ids, strings.TrimPrefix(sk, prefixFollower))
			}
			return true
		})
		if err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// queryAll runs in page after page, handing each item to each until each
// returns false or the range ends.
func (s *Store) queryAll(ctx context.Context, op string, in *dynamodb.QueryInput, each func(map[string]types.AttributeValue) bool) error {
	for {
		out, err := s.api.Query(ctx, in)
		if err != nil {
			return fail(op, err)
		}
		for _, item := range out.Items {
			if !each(item) {
				return nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// PublishedSince returns the places (GSI1 sort keys) and IDs of the author's
// posts published after since, newest first, at most limit (0: all).
func (s *Store) PublishedSince(ctx context.Context, authorID string, since time.Time, limit int) ([]FeedEntry, error) {
	const op = "store.PublishedSince"
	if err := checkIDs(op, authorID); err != nil {
		return nil, err
	}
	lo, hi := timeRange(PostPrefix, since, time.Time{})
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), ScanIndexForward: aws.Bool(false)}
	if limit > 0 {
		in.Limit = aws.Int32(int32(limit))
	}
	cond := partition(AttrGSI1PK, AuthorPK(authorID)).And(expression.Key(AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi)))
	if err := keyQuery(in, cond, []string{AttrGSI1SK, "id", "createdAt"}); err != nil {
		return nil, err
	}
	var out []FeedEntry
	var bad error
	err := s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		var p struct {
			Place string `dynamodbav:"gsi1sk"`
			ID    string `dynamodbav:"id"`
		}
		if bad = unmarshal(op, item, &p); bad != nil {
			return false
		}
		out = append(out, FeedEntry{Place: p.Place, PostID: p.ID, AuthorID: authorID})
		return limit == 0 || len(out) < limit
	})
	return out, cmp.Or(bad, err)
}

// FeedEntriesBy returns the entries of the author's posts in the reader's
// feed: Query pages of the whole feed (what an unfollow must take out is
// what the feed holds, not what the author has now), filtered on authorId.
func (s *Store) FeedEntriesBy(ctx context.Context, readerID, authorID string) ([]FeedEntry, error) {
	const op = "store.FeedEntriesBy"
	if err := checkIDs(op, readerID, authorID); err != nil {
		return nil, err
	}
	expr, err := expression.NewBuilder().WithKeyCondition(partition(AttrPK, FeedPK(readerID))).
		WithFilter(expression.Name("authorId").Equal(expression.Value(authorID))).
		WithProjection(namesList([]string{AttrPK, AttrSK, "postId"})).Build()
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), KeyConditionExpression: expr.KeyCondition(), FilterExpression: expr.Filter(),
		ProjectionExpression: expr.Projection(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()}
	var out []FeedEntry
	err = s.queryAll(ctx, op, in, func(item map[string]types.AttributeValue) bool {
		if k, ok := keyOf(item); ok {
			out = append(out, FeedEntry{Reader: readerID, Place: k.sk, PostID: stringAttr(item, "postId"), AuthorID: authorID})
		}
		return true
	})
	return out, err
}

// Follows reports whether followerID follows followedID (strongly
// consistent GetItem).
func (s *Store) Follows(ctx context.Context, followerID, followedID string) (bool, error) {
	const op = "store.Follows"
	if err := checkIDs(op, followerID, followedID); err != nil {
		return false, err
	}
	var f Follow
	return s.getConsistent(ctx, op, itemKey{UserPK(followerID), FollowsSK(followedID)}, &f)
}

// PublishedPost reports whether the post exists and is published (strongly
// consistent GetItem of its counter, or of its own item for a post older
// than counters).
func (s *Store) PublishedPost(ctx context.Context, postID string) (bool, error) {
	const op = "store.PublishedPost"
	if err := checkIDs(op, postID); err != nil {
		return false, err
	}
	var c postCounterItem
	found, err := s.getConsistent(ctx, op, itemKey{PostPK(postID), SKCount}, &c)
	if err != nil || found {
		return found && c.Status != StatusDraft, err
	}
	var p Post
	found, err = s.getConsistent(ctx, op, itemKey{PostPK(postID), SKMetadata}, &p)
	return found && p.Published(), err
}

// Feed returns a page of the reader's feed (Query.feed), newest first by
// publication: the reader's entries (what the projector fanned out), merged
// with the posts of the high-follower authors the reader follows (read at
// read time, at most MaxPulled of them: their markers in the feed).
//
// Round trips: the entries' Query and the markers' Query, sent together;
// then one BatchGetItem of the entries' posts and of the reader's follows
// of every author on the page (and the posts' counters, when a count is
// selected), sent together with one Query on GSI1 per high-follower author
// (whose items there are whole posts) and, when a count is selected, one
// of its counters there (CountedSK). A third, a BatchGetItem of counters,
// only for such posts on the page whose counter the projector has not put
// on GSI1 (IndexCounters): published in the moment the author was being
// marked, or older than counters. An entry whose post is gone or no longer
// published, an author the reader no longer follows, and an expired entry
// are left out at once, before the projector or TTL has removed them: a
// page may hold fewer posts than its limit, and its nextToken still resumes
// after the last post that could be read in order.
func (s *Store) Feed(ctx context.Context, readerID string, page PageRequest) (Page[Post], error) {
	const op = "store.Feed"
	q := feedOf(readerID)
	if err := checkIDs(op, readerID); err != nil {
		return Page[Post]{}, err
	}
	if page.Limit < 1 || page.Limit > MaxLimit {
		return Page[Post]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	cursor := "" // the place the page starts after ("": the newest)
	if page.NextToken != "" {
		start, err := s.tokens.Decode(q.scope, page.NextToken)
		if err != nil {
			return Page[Post]{}, err
		}
		if !q.holds(start) {
			return Page[Post]{}, errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
		}
		cursor = start[AttrSK].(*types.AttributeValueMemberS).Value
	}
	var attrs []string
	if page.Attributes != nil {
		attrs = append([]string{"id", "status", "authorId"}, page.Attributes...)
	}

	// 1: the entries and the markers.
	var (
		entries    Page[feedItem]
		entriesErr error
		pulled     []string
		pulledErr  error
		wg         sync.WaitGroup
	)
	branch := cost.Together(ctx)
	entriesCtx, markersCtx := branch(), branch()
	wg.Go(func() {
		req := PageRequest{Limit: page.Limit, NextToken: page.NextToken, Attributes: []string{"postId", "authorId", "ttl"}}
		entries, entriesErr = queryPage[feedItem](entriesCtx, s, q, req)
	})
	pulled, pulledErr = s.pullMarkers(markersCtx, readerID)
	wg.Wait()
	if entriesErr != nil {
		return Page[Post]{}, entriesErr
	}
	if pulledErr != nil {
		return Page[Post]{}, pulledErr
	}

	// 2: the entries' posts and the follows, and the pulled authors' posts.
	counts := SelectsCount(page.Attributes, PostCounts)
	now := s.now().Unix()
	keys := make([]itemKey, 0, 3*len(entries.Items)+len(pulled))
	for _, e := range entries.Items {
		if e.Expires >= now {
			keys = append(keys, itemKey{PostPK(e.PostID), SKMetadata}, itemKey{UserPK(readerID), FollowsSK(e.AuthorID)})
			if counts {
				keys = append(keys, itemKey{PostPK(e.PostID), SKCount})
			}
		}
	}
	for _, a := range pulled { // (its posts come whole from GSI1)
		keys = append(keys, itemKey{UserPK(readerID), FollowsSK(a)})
	}
	var (
		items     map[itemKey]map[string]types.AttributeValue
		itemsErr  error
		byAuthor  = make([][]map[string]types.AttributeValue, len(pulled))
		more      = make([]bool, len(pulled))
		counters  = make([]map[string]Post, len(pulled))
		authorErr = make([]error, 2*len(pulled))
	)
	branch = cost.Together(ctx)
	itemsCtx := branch()
	for i, a := range pulled {
		ctx := branch()
		wg.Go(func() { byAuthor[i], more[i], authorErr[2*i] = s.postsBefore(ctx, a, cursor, page.Limit+1, attrs) })
		if counts {
			ctx := branch()
			wg.Go(func() { counters[i], authorErr[2*i+1] = s.countersBefore(ctx, a, cursor, page.Limit+1) })
		}
	}
	items, itemsErr = s.batchGet(itemsCtx, op, keys, attrs)
	wg.Wait()
	if itemsErr != nil {
		return Page[Post]{}, itemsErr
	}
	for _, err := range authorErr {
		if err != nil {
			return Page[Post]{}, err
		}
	}

	// The candidates, newest first; a source that has more bounds how far
	// down the page may go.
	type candidate struct {
		place string
		post  Post
		// uncounted: a high-follower author's post whose counts are not read
		// yet (counts selected, its counter not on GSI1)
		uncounted bool
	}
	var cands []candidate
	bound := "" // the newest place below which a source may hold unread posts
	if entries.NextToken != nil && len(entries.Items) > 0 {
		bound = entries.Items[len(entries.Items)-1].SK
	}
	follows := func(author string) bool {
		_, ok := items[itemKey{UserPK(readerID), FollowsSK(author)}]
		return ok
	}
	for _, e := range entries.Items {
		item, ok := items[itemKey{PostPK(e.PostID), SKMetadata}]
		if e.Expires < now || !ok || !follows(e.AuthorID) {
			continue
		}
		var p Post
		if _, err := decodeCounted[Post](op, []map[string]types.AttributeValue{item, items[itemKey{PostPK(e.PostID), SKCount}]}, &p); err != nil {
			return Page[Post]{}, err
		}
		if p.Published() && p.AuthorID == e.AuthorID {
			readOnly(&p, attrs)
			cands = append(cands, candidate{place: e.SK, post: p})
		}
	}
	for i, a := range pulled {
		if more[i] && len(byAuthor[i]) > 0 {
			bound = max(bound, stringAttr(byAuthor[i][len(byAuthor[i])-1], AttrGSI1SK))
		}
		if !follows(a) {
			continue
		}
		for _, item := range byAuthor[i] {
			var p Post
			if err := unmarshal(op, item, &p); err != nil {
				return Page[Post]{}, err
			}
			c, indexed := counters[i][p.ID]
			p.add(c)
			readOnly(&p, attrs)
			cands = append(cands, candidate{stringAttr(item, AttrGSI1SK), p, counts && !indexed})
		}
	}
	slices.SortStableFunc(cands, func(a, b candidate) int { return strings.Compare(b.place, a.place) })

	out := Page[Post]{Items: []Post{}}
	var (
		places    []string
		uncounted []int // indexes in out.Items
	)
	seen := map[string]bool{}
	left := false // candidates not emitted
	for _, c := range cands {
		if seen[c.post.ID] {
			continue
		}
		if c.place < bound || len(out.Items) == page.Limit {
			left = true
			break
		}
		seen[c.post.ID] = true
		if c.uncounted {
			uncounted = append(uncounted, len(out.Items))
		}
		out.Items = append(out.Items, c.post)
		places = append(places, c.place)
	}
	token := func(place string) (string, error) {
		return s.tokens.Encode(q.scope, itemKey{FeedPK(readerID), place}.attributes())
	}
	out.after = func(i int) (string, error) { return token(places[i]) }
	if left || bound != "" {
		resume := bound
		if len(out.Items) == page.Limit || bound == "" {
			resume = places[len(places)-1]
		}
		t, err := token(resume)
		if err != nil {
			return Page[Post]{}, err
		}
		out.NextToken = &t
	}

	// 3: the counters of the pulled posts on the page that were not on GSI1,
	// when counts are selected.
	if len(uncounted) > 0 {
		posts := make([]Post, len(uncounted))
		for i, at := range uncounted {
			posts[i] = out.Items[at]
		}
		if err := s.addCounters(ctx, op, posts); err != nil {
			return Page[Post]{}, err
		}
		for i, at := range uncounted {
			out.Items[at] = posts[i]
		}
	}
	if page.MaxBytes > 0 && len(out.Items) > 0 {
		return out.Cut(max(fitBytes(out.Items, page.MaxBytes), 1))
	}
	return out, nil
}

// pullMarkers returns the high-follower authors the reader's feed reads at
// read time, at most MaxPulled, by author ID.
func (s *Store) pullMarkers(ctx context.Context, readerID string) ([]string, error) {
	const op = "store.Feed"
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), Limit: aws.Int32(MaxPulled)}
	if err := keyQuery(in, partition(AttrPK, FeedPK(readerID)).And(expression.Key(AttrSK).BeginsWith(prefixPull)), []string{"authorId"}); err != nil {
		return nil, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, fail(op, err)
	}
	authors := make([]string, 0, len(out.Items))
	for _, item := range out.Items {
		if a := stringAttr(item, "authorId"); ValidID(a) {
			authors = append(authors, a)
		}
	}
	return authors, nil
}

// feedWindow is the range of places a feed lists: the posts published in
// the last FeedTTL (the entries' TTL, for the authors read at read time).
func (s *Store) feedWindow() (lo, hi string) {
	return timeRange(PostPrefix, s.now().Add(-FeedTTL), time.Time{})
}

// postsBefore reads, on GSI1, up to limit of the author's posts published
// in the feed's window and before place ("": the newest), newest first, and
// whether more may follow.
func (s *Store) postsBefore(ctx context.Context, authorID, place string, limit int, attrs []string) ([]map[string]types.AttributeValue, bool, error) {
	const op = "store.Feed"
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit))}
	lo, hi := s.feedWindow()
	if place != "" {
		hi = place
	}
	cond := partition(AttrGSI1PK, AuthorPK(authorID)).And(expression.Key(AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi)))
	var projection []string
	if attrs != nil {
		projection = append(keyAttrs(GSI1), attrs...)
	}
	if err := keyQuery(in, cond, projection); err != nil {
		return nil, false, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, false, fail(op, err)
	}
	items := slices.DeleteFunc(out.Items, func(item map[string]types.AttributeValue) bool { return stringAttr(item, AttrGSI1SK) == place })
	return items, len(out.LastEvaluatedKey) > 0, nil
}

// PullThreshold is the follower count above which an author's posts are no
// longer fanned out to the followers' feeds: their feeds read the author's
// posts at read time instead (see Feed). A fan-out costs one write unit
// and a 25th of a BatchWriteItem per follower; at 10,000 it is 400 requests,
// a second or two of one projector invocation, and past it one post's
// fan-out would take a good part of the function's 60 s (100,000: 4,000
// requests; make bench measures them).
const PullThreshold = 10000

// MaxPulled is how many high-follower authors one feed merges at read time,
// one Query each in the page's second round trip: the first MaxPulled the
// reader follows, by author ID. Past it, the others' posts are not in the
// feed (they stay on the authors' own pages).
const MaxPulled = 50

// AuthorReach is what the projector reads of an author to choose between
// fanning out and being read at read time.
type AuthorReach struct {
	Followers int
	Pulled    bool // marked read at read time (once marked, it stays)
}

// Reach reads the author's follower count and mark: one strongly
// consistent Query of its counter and profile (the count is their sum, as
// for every read of counts).
func (s *Store) Reach(ctx context.Context, authorID string) (AuthorReach, error) {
	const op = "store.Reach"
	if err := checkIDs(op, authorID); err != nil {
		return AuthorReach{}, err
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true)}
	if err := keyQuery(in, countedItems(UserPK(authorID)), []string{AttrSK, "followerCount", "pulled", "hot"}); err != nil {
		return AuthorReach{}, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return AuthorReach{}, fail(op, err)
	}
	var r AuthorReach
	for _, item := range out.Items {
		var c struct {
			FollowerCount int                   `dynamodbav:"followerCount"`
			Pulled        bool                  `dynamodbav:"pulled"`
			Hot           map[string]ShardTally `dynamodbav:"hot"` // a hot user's shards' counts
		}
		if err := unmarshal(op, item, &c); err != nil {
			return AuthorReach{}, err
		}
		r.Followers += c.FollowerCount
		for _, t := range c.Hot {
			r.Followers += t.Followers
		}
		r.Pulled = r.Pulled || c.Pulled
	}
	return r, nil
}

// MarkPulled marks the author as read at read time (on its counter item).
func (s *Store) MarkPulled(ctx context.Context, authorID string) error {
	const op = "store.MarkPulled"
	if err := checkIDs(op, authorID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name("pulled"), expression.Value(true))
	expr, err := expression.NewBuilder().WithUpdate(upd).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey{UserPK(authorID), SKCount}.attributes(),
		UpdateExpression: expr.Update(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	if err != nil {
		return fail(op, err)
	}
	return nil
}

// indexWorkers is how many UpdateItems IndexCounters keeps in flight.
const indexWorkers = 8

// IndexCounters puts the counters of the author's published posts (by place
// and ID; the entries' readers are not used) on GSI1 beside the posts, under
// CountedSK, so that a feed reading the author at read time reads their
// counts in the same round trip as the posts. Each is one UpdateItem of the
// counter (a write unit, and one more on GSI1), conditioned on the counter
// being there with that author: a post deleted meanwhile, or older than
// counters, is left as it is, and a feed reads its counts in a third round
// trip. Setting the same keys again writes the same item.
func (s *Store) IndexCounters(ctx context.Context, authorID string, posts []FeedEntry) error {
	const op = "store.IndexCounters"
	if err := checkIDs(op, authorID); err != nil {
		return err
	}
	failed := make([]error, len(posts))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(indexWorkers, len(posts)) {
		wg.Go(func() {
			for i := range next {
				failed[i] = s.indexCounter(ctx, op, authorID, posts[i])
			}
		})
	}
	for i := range posts {
		next <- i
	}
	close(next)
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) indexCounter(ctx context.Context, op, authorID string, p FeedEntry) error {
	if err := checkIDs(op, p.PostID); err != nil {
		return err
	}
	upd := expression.Set(expression.Name(AttrGSI1PK), expression.Value(AuthorPK(authorID))).
		Set(expression.Name(AttrGSI1SK), expression.Value(CountedSK(p.Place)))
	cond := itemExists.And(expression.Name("authorId").Equal(expression.Value(authorID)))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = s.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(s.table), Key: itemKey{PostPK(p.PostID), SKCount}.attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(), ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	if errors.As(err, &ccf) {
		return nil // no counter: the post is gone, or older than counters
	}
	if err != nil {
		return fail(op, err)
	}
	return nil
}

// countersBefore reads, on GSI1, the counters that IndexCounters put there
// of the posts postsBefore reads (up to limit), by post ID.
func (s *Store) countersBefore(ctx context.Context, authorID, place string, limit int) (map[string]Post, error) {
	const op = "store.Feed"
	lo, hi := s.feedWindow()
	if place != "" {
		hi = place
	}
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), IndexName: aws.String(GSI1), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit))}
	cond := partition(AttrGSI1PK, AuthorPK(authorID)).And(expression.Key(AttrGSI1SK).Between(expression.Value(CountedSK(lo)), expression.Value(CountedSK(hi))))
	if err := keyQuery(in, cond, append([]string{AttrPK}, withTallies(PostCounts)...)); err != nil {
		return nil, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, fail(op, err)
	}
	counters := make(map[string]Post, len(out.Items))
	for _, item := range out.Items {
		var c Post
		if err := unmarshal(op, item, &c); err != nil {
			return nil, err
		}
		counters[strings.TrimPrefix(stringAttr(item, AttrPK), prefixPost)] = c
	}
	return counters, nil
}

// PutPullMarkers records in each reader's feed that it reads the author's
// posts at read time.
func (s *Store) PutPullMarkers(ctx context.Context, authorID string, readers []string) error {
	const op = "store.PutPullMarkers"
	writes := make([]types.WriteRequest, len(readers))
	for i, r := range readers {
		if err := checkIDs(op, r, authorID); err != nil {
			return err
		}
		writes[i] = types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{
			AttrPK: str(FeedPK(r)), AttrSK: str(PullSK(authorID)), "authorId": str(authorID)}}}
	}
	return s.batchWrite(ctx, op, writes)
}

// DeletePullMarker removes the reader's marker of the author (if any).
func (s *Store) DeletePullMarker(ctx context.Context, readerID, authorID string) error {
	const op = "store.DeletePullMarker"
	if err := checkIDs(op, readerID, authorID); err != nil {
		return err
	}
	return s.batchWrite(ctx, op, []types.WriteRequest{deleteRequest(itemKey{FeedPK(readerID), PullSK(authorID)})})
}
