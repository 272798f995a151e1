package store

import (
	"cmp"
	"context"
	"slices"
	"sort"
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

func (e FeedEntry) key() Key { return Key{FeedPK(e.Reader), e.Place} }

// feedOf reads a reader's entries, newest first.
func feedOf(readerID string) partitionQuery {
	return partitionQuery{scope: cursor.Scope{Query: "Query.feed", Parent: readerID}, pk: FeedPK(readerID), skPrefix: PostPrefix, newestFirst: true}
}

// Feed returns a page of the reader's feed (Query.feed), newest first by
// publication: the reader's entries (what the projector fanned out), merged
// with the posts of the high-follower authors the reader follows (read at
// read time, at most maxPulled of them). Two round trips (a third only for
// counts not yet indexed: countPulled); docs/table.md ("The feed", AP13)
// gives each request. An entry whose post is gone or unpublished, whose
// author is unfollowed, or which has expired is left out at once: a page
// may hold fewer posts than its limit, and its nextToken still resumes
// after the last post that could be read in order.
func (s *Store) Feed(ctx context.Context, readerID string, page PageRequest) (Page[Post], error) {
	r, err := s.newFeedRead(readerID, page)
	if err != nil {
		return Page[Post]{}, err
	}
	if err := r.entriesAndMarkers(ctx); err != nil {
		return Page[Post]{}, err
	}
	if err := r.postsAndFollows(ctx); err != nil {
		return Page[Post]{}, err
	}
	cands, bound, err := r.candidates()
	if err != nil {
		return Page[Post]{}, err
	}
	out, uncounted, err := r.take(cands, bound)
	if err != nil {
		return Page[Post]{}, err
	}
	if err := r.countPulled(ctx, out.Items, uncounted); err != nil {
		return Page[Post]{}, err
	}
	if page.MaxBytes > 0 && len(out.Items) > 0 {
		return out.Cut(max(fitBytes(out.Items, page.MaxBytes), 1))
	}
	return out, nil
}

// feedRead is one page of a feed being read, step by step.
type feedRead struct {
	s        *Store
	readerID string
	page     PageRequest
	q        partitionQuery
	cursor   string   // the place the page starts after ("": the newest)
	attrs    []string // what is read of the posts, nil for everything
	counts   bool     // whether the page reads counts
	now      int64    // entries that expired before are left out
	// what the steps read
	entries  Page[feedItem]
	pulled   []string // the high-follower authors the reader's markers name
	items    map[Key]map[string]types.AttributeValue
	byAuthor [][]map[string]types.AttributeValue // each pulled author's posts
	more     []bool                              // whether an author has posts past those read
	counters []map[string]Post                   // each pulled author's indexed counters
}

// candidate is a post that may be on the page, at its place.
type candidate struct {
	place string
	post  Post
	// uncounted: a high-follower author's post whose counts are not read
	// yet (counts selected, its counter not on GSI1)
	uncounted bool
}

const feedOp = "store.Feed"

// newFeedRead checks the request and where it resumes.
func (s *Store) newFeedRead(readerID string, page PageRequest) (*feedRead, error) {
	r := &feedRead{s: s, readerID: readerID, page: page, q: feedOf(readerID), counts: SelectsCount(page.Attributes, postCounts), now: s.now().Unix()}
	if err := checkIDs(feedOp, readerID); err != nil {
		return nil, err
	}
	if page.Limit < 1 || page.Limit > MaxLimit {
		return nil, errs.E(feedOp, errs.Validation, "limit must be between 1 and 100")
	}
	if page.NextToken != "" {
		start, err := s.tokens.Decode(r.q.scope, page.NextToken)
		if err != nil {
			return nil, err
		}
		if !r.q.holds(start) {
			return nil, errs.E(feedOp, errs.InvalidNextToken, "nextToken is not valid for this query")
		}
		r.cursor = start[AttrSK].(*types.AttributeValueMemberS).Value
	}
	if page.Attributes != nil {
		r.attrs = append([]string{"id", "status", "authorId"}, page.Attributes...)
	}
	return r, nil
}

// entriesAndMarkers is the first round trip: the page's entries and the
// reader's pull markers, together.
func (r *feedRead) entriesAndMarkers(ctx context.Context) error {
	var (
		entriesErr, pulledErr error
		wg                    sync.WaitGroup
	)
	branch := cost.Together(ctx)
	entriesCtx, markersCtx := branch(), branch()
	wg.Go(func() {
		req := PageRequest{Limit: r.page.Limit, NextToken: r.page.NextToken, Attributes: []string{"postId", "authorId", "ttl"}}
		r.entries, entriesErr = queryPage[feedItem](entriesCtx, r.s, r.q, req)
	})
	r.pulled, pulledErr = r.s.pullMarkers(markersCtx, r.readerID)
	wg.Wait()
	return cmp.Or(entriesErr, pulledErr)
}

// postsAndFollows is the second round trip: the entries' posts (and
// counters) and the reader's follows of their authors and of the pulled
// ones, in one BatchGetItem, beside each pulled author's posts (and indexed
// counters) on GSI1.
func (r *feedRead) postsAndFollows(ctx context.Context) error {
	keys := make([]Key, 0, 3*len(r.entries.Items)+len(r.pulled))
	for _, e := range r.entries.Items {
		if e.Expires >= r.now {
			keys = append(keys, Key{PostPK(e.PostID), SKMetadata}, Key{UserPK(r.readerID), FollowsSK(e.AuthorID)})
			if r.counts {
				keys = append(keys, Key{PostPK(e.PostID), SKCount})
			}
		}
	}
	for _, a := range r.pulled { // (its posts come whole from GSI1)
		keys = append(keys, Key{UserPK(r.readerID), FollowsSK(a)})
	}
	r.byAuthor, r.more, r.counters = make([][]map[string]types.AttributeValue, len(r.pulled)), make([]bool, len(r.pulled)), make([]map[string]Post, len(r.pulled))
	authorErr := make([]error, 2*len(r.pulled))
	var (
		itemsErr error
		wg       sync.WaitGroup
	)
	branch := cost.Together(ctx)
	itemsCtx := branch()
	for i, a := range r.pulled {
		ctx := branch()
		wg.Go(func() {
			r.byAuthor[i], r.more[i], authorErr[2*i] = r.s.postsBefore(ctx, a, r.cursor, r.page.Limit+1, r.attrs)
		})
		if r.counts {
			ctx := branch()
			wg.Go(func() { r.counters[i], authorErr[2*i+1] = r.s.countersBefore(ctx, a, r.cursor, r.page.Limit+1) })
		}
	}
	r.items, itemsErr = r.s.BatchGet(itemsCtx, feedOp, keys, r.attrs)
	wg.Wait()
	return cmp.Or(append([]error{itemsErr}, authorErr...)...)
}

// follows reports whether the reader follows author, as read.
func (r *feedRead) follows(author string) bool {
	_, ok := r.items[Key{UserPK(r.readerID), FollowsSK(author)}]
	return ok
}

// candidates returns the posts that may be on the page, newest first, and
// the bound: the newest place below which a source that has more may hold
// posts not read, past which the page may not go.
func (r *feedRead) candidates() ([]candidate, string, error) {
	var cands []candidate
	bound := ""
	if r.entries.NextToken != nil && len(r.entries.Items) > 0 {
		bound = r.entries.Items[len(r.entries.Items)-1].SK
	}
	for _, e := range r.entries.Items {
		item, ok := r.items[Key{PostPK(e.PostID), SKMetadata}]
		if e.Expires < r.now || !ok || !r.follows(e.AuthorID) {
			continue
		}
		var p Post
		if _, err := decodeCounted[Post](feedOp, r.s.own, []map[string]types.AttributeValue{item, r.items[Key{PostPK(e.PostID), SKCount}]}, &p); err != nil {
			return nil, "", err
		}
		if p.Published() && p.AuthorID == e.AuthorID {
			readOnly(&p, r.attrs)
			cands = append(cands, candidate{place: e.SK, post: p})
		}
	}
	for i, a := range r.pulled {
		if r.more[i] && len(r.byAuthor[i]) > 0 {
			bound = max(bound, stringAttr(r.byAuthor[i][len(r.byAuthor[i])-1], AttrGSI1SK))
		}
		if !r.follows(a) {
			continue
		}
		for _, item := range r.byAuthor[i] {
			var p Post
			if err := unmarshal(feedOp, item, &p); err != nil {
				return nil, "", err
			}
			c, indexed := r.counters[i][p.ID]
			c.Hot = r.s.own.onto(PostPK(p.ID), c.Hot)
			p.add(c)
			readOnly(&p, r.attrs)
			cands = append(cands, candidate{stringAttr(item, AttrGSI1SK), p, r.counts && !indexed})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].place > cands[j].place })
	return cands, bound, nil
}

// take takes the page from the candidates, each post once, down to the
// bound, with its token; and the indexes of its posts left uncounted.
func (r *feedRead) take(cands []candidate, bound string) (Page[Post], []int, error) {
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
		if c.place < bound || len(out.Items) == r.page.Limit {
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
		return r.s.tokens.Encode(r.q.scope, Key{FeedPK(r.readerID), place}.Attributes())
	}
	out.after = func(i int) (string, error) { return token(places[i]) }
	if left || bound != "" {
		resume := bound
		if len(out.Items) == r.page.Limit || bound == "" {
			resume = places[len(places)-1]
		}
		t, err := token(resume)
		if err != nil {
			return Page[Post]{}, nil, err
		}
		out.NextToken = &t
	}
	return out, uncounted, nil
}

// countPulled is the third round trip, only when counts are selected and
// the page holds pulled posts whose counters were not on GSI1: their
// counters, into posts.
func (r *feedRead) countPulled(ctx context.Context, posts []Post, uncounted []int) error {
	if len(uncounted) == 0 {
		return nil
	}
	read := make([]Post, len(uncounted))
	for i, at := range uncounted {
		read[i] = posts[at]
	}
	if err := r.s.addCounters(ctx, feedOp, read); err != nil {
		return err
	}
	for i, at := range uncounted {
		posts[at] = read[i]
	}
	return nil
}

// pullMarkers returns the high-follower authors the reader's feed reads at
// read time, at most maxPulled, by author ID.
func (s *Store) pullMarkers(ctx context.Context, readerID string) ([]string, error) {
	const op = "store.Feed"
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), Limit: aws.Int32(maxPulled)}
	if err := keyQuery(in, partition(AttrPK, FeedPK(readerID)).And(expression.Key(AttrSK).BeginsWith(prefixPull)), []string{"authorId"}); err != nil {
		return nil, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return nil, Fail(op, err)
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
		return nil, false, Fail(op, err)
	}
	items := slices.DeleteFunc(out.Items, func(item map[string]types.AttributeValue) bool { return stringAttr(item, AttrGSI1SK) == place })
	return items, len(out.LastEvaluatedKey) > 0, nil
}
