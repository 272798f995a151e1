package feed

import (
	"cmp"
	"context"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// TTL is how long an entry stays: DynamoDB's TTL deletes it after that
// (within a few days more). A feed lists the posts of the last 30 days.
const TTL = 30 * 24 * time.Hour

// maxPulled is how many high-follower authors one feed merges at read time,
// one Query each in the page's second round trip: the first maxPulled the
// reader follows, by author ID. Past it, the others' posts are not in the
// feed (they stay on the authors' own pages).
const maxPulled = 50

const readOp = "feed.Feed"

// Feed returns a page of the reader's feed (Query.feed), newest first by
// publication: the reader's entries (what the projector fanned out), merged
// with the posts of the high-follower authors the reader follows (read at
// read time, at most maxPulled of them). Two round trips (a third only for
// counts not yet indexed: countPulled); docs/table.md ("The feed", AP13)
// gives each request. An entry whose post is gone or unpublished, whose
// author is unfollowed, or which has expired is left out at once: a page
// may hold fewer posts than its limit, and its nextToken still resumes
// after the last post that could be read in order.
func (t *Table) Feed(ctx context.Context, readerID string, page store.PageRequest) (store.Page[store.Post], error) {
	r, err := t.newRead(readerID, page)
	if err != nil {
		return store.Page[store.Post]{}, err
	}
	if err := r.entriesAndMarkers(ctx); err != nil {
		return store.Page[store.Post]{}, err
	}
	if err := r.postsAndFollows(ctx); err != nil {
		return store.Page[store.Post]{}, err
	}
	cands, bound, err := r.candidates()
	if err != nil {
		return store.Page[store.Post]{}, err
	}
	out, uncounted, err := r.take(cands, bound)
	if err != nil {
		return store.Page[store.Post]{}, err
	}
	if err := r.countPulled(ctx, out.Items, uncounted); err != nil {
		return store.Page[store.Post]{}, err
	}
	return out.Fit(page.MaxBytes)
}

// read is one page of a feed being read, step by step.
type read struct {
	t        *Table
	readerID string
	page     store.PageRequest
	scope    cursor.Scope                    // what binds the feed's tokens
	start    map[string]types.AttributeValue // the entry the page resumes after (nil: the newest)
	cursor   string                          // its place ("": the newest)
	attrs    []string                        // what is read of the posts, nil for everything
	counts   bool                            // whether the page reads counts
	now      int64                           // entries that expired before are left out
	// what the steps read
	entries  []entryItem
	more     bool     // whether entries follow those read
	pulled   []string // the high-follower authors the reader's markers name
	items    map[store.Key]map[string]types.AttributeValue
	byAuthor [][]map[string]types.AttributeValue          // each pulled author's posts
	left     []bool                                       // whether an author has posts past those read
	counters []map[string]map[string]types.AttributeValue // each pulled author's indexed counters, by post ID
}

// entryItem is an entry as read, with its place.
type entryItem struct {
	SK string `dynamodbav:"sk"`
	Entry
}

// candidate is a post that may be on the page, at its place.
type candidate struct {
	place string
	post  store.Post
	// uncounted: a high-follower author's post whose counts are not read
	// yet (counts selected, its counter not on GSI1)
	uncounted bool
}

// newRead checks the request and where it resumes.
func (t *Table) newRead(readerID string, page store.PageRequest) (*read, error) {
	r := &read{t: t, readerID: readerID, page: page, scope: cursor.Scope{Query: "Query.feed", Parent: readerID},
		counts: store.SelectsCount(page.Attributes, store.PostCounts), now: t.s.Now().Unix()}
	if err := store.CheckIDs(readOp, readerID); err != nil {
		return nil, err
	}
	if page.Limit < 1 || page.Limit > store.MaxLimit {
		return nil, errs.E(readOp, errs.Validation, "limit must be between 1 and 100")
	}
	if page.NextToken != "" {
		start, err := t.s.Tokens().Decode(r.scope, page.NextToken)
		if err != nil {
			return nil, err
		}
		if !r.holds(start) {
			return nil, errs.E(readOp, errs.InvalidNextToken, "nextToken is not valid for this query")
		}
		r.start, r.cursor = start, start[store.AttrSK].(*types.AttributeValueMemberS).Value
	}
	if page.Attributes != nil {
		r.attrs = append([]string{"id", "status", "authorId"}, page.Attributes...)
	}
	return r, nil
}

// holds reports whether key is the key of one of the reader's entries
// (exactly the table's key attributes): a token signed with the right key
// may still carry another key (a leaked key, a bug).
func (r *read) holds(key map[string]types.AttributeValue) bool {
	pk, ok := key[store.AttrPK].(*types.AttributeValueMemberS)
	sk, ok2 := key[store.AttrSK].(*types.AttributeValueMemberS)
	return len(key) == 2 && ok && ok2 && pk.Value == PK(r.readerID) &&
		len(sk.Value) > len(store.PostPrefix) && sk.Value[:len(store.PostPrefix)] == store.PostPrefix
}

// entriesAndMarkers is the first round trip: the page's entries and the
// reader's pull markers, together.
func (r *read) entriesAndMarkers(ctx context.Context) error {
	var (
		entriesErr, pulledErr error
		wg                    sync.WaitGroup
	)
	branch := cost.Together(ctx)
	entriesCtx, markersCtx := branch(), branch()
	wg.Go(func() { entriesErr = r.readEntries(entriesCtx) })
	r.pulled, pulledErr = r.t.pullMarkers(markersCtx, r.readerID)
	wg.Wait()
	return cmp.Or(entriesErr, pulledErr)
}

// readEntries reads the page's entries, newest first: one Query of one more
// than the page's limit, so that it knows whether more follow.
func (r *read) readEntries(ctx context.Context) error {
	in := &dynamodb.QueryInput{TableName: aws.String(r.t.table), ScanIndexForward: aws.Bool(false),
		Limit: aws.Int32(int32(r.page.Limit + 1)), ExclusiveStartKey: r.start}
	cond := keyIs(store.AttrPK, PK(r.readerID)).And(expression.Key(store.AttrSK).BeginsWith(store.PostPrefix))
	if err := keyQuery(in, cond, []string{store.AttrPK, store.AttrSK, "postId", "authorId", "ttl"}); err != nil {
		return err
	}
	out, err := r.t.api.Query(ctx, in)
	if err != nil {
		return store.Fail(readOp, err)
	}
	if err := attributevalue.UnmarshalListOfMaps(out.Items, &r.entries); err != nil {
		return errs.Wrap(readOp, errs.Internal, "internal error", err)
	}
	r.more = len(r.entries) > r.page.Limit || len(out.LastEvaluatedKey) > 0
	if len(r.entries) > r.page.Limit {
		r.entries = r.entries[:r.page.Limit]
	}
	return nil
}

// postsAndFollows is the second round trip: the entries' posts (and
// counters) and the reader's follows of their authors and of the pulled
// ones, in one BatchGetItem, beside each pulled author's posts (and indexed
// counters) on GSI1.
func (r *read) postsAndFollows(ctx context.Context) error {
	keys := make([]store.Key, 0, 3*len(r.entries)+len(r.pulled))
	for _, e := range r.entries {
		if e.Expires >= r.now {
			keys = append(keys, store.Key{PK: store.PostPK(e.PostID), SK: store.SKMetadata}, r.followKey(e.AuthorID))
			if r.counts {
				keys = append(keys, store.Key{PK: store.PostPK(e.PostID), SK: store.SKCount})
			}
		}
	}
	for _, a := range r.pulled { // (its posts come whole from GSI1)
		keys = append(keys, r.followKey(a))
	}
	r.byAuthor, r.left, r.counters = make([][]map[string]types.AttributeValue, len(r.pulled)), make([]bool, len(r.pulled)), make([]map[string]map[string]types.AttributeValue, len(r.pulled))
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
			r.byAuthor[i], r.left[i], authorErr[2*i] = r.t.postsBefore(ctx, a, r.cursor, r.page.Limit+1, r.attrs)
		})
		if r.counts {
			ctx := branch()
			wg.Go(func() { r.counters[i], authorErr[2*i+1] = r.t.countersBefore(ctx, a, r.cursor, r.page.Limit+1) })
		}
	}
	r.items, itemsErr = r.t.s.BatchGet(itemsCtx, readOp, keys, r.attrs)
	wg.Wait()
	return cmp.Or(append([]error{itemsErr}, authorErr...)...)
}

// followKey is the key of the reader's follow of author.
func (r *read) followKey(author string) store.Key {
	return store.Key{PK: store.UserPK(r.readerID), SK: store.FollowsSK(author)}
}

// follows reports whether the reader follows author, as read.
func (r *read) follows(author string) bool {
	_, ok := r.items[r.followKey(author)]
	return ok
}

// candidates returns the posts that may be on the page, newest first, and
// the bound: the newest place below which a source that has more may hold
// posts not read, past which the page may not go.
func (r *read) candidates() ([]candidate, string, error) {
	var cands []candidate
	bound := ""
	if r.more && len(r.entries) > 0 {
		bound = r.entries[len(r.entries)-1].SK
	}
	for _, e := range r.entries {
		item, ok := r.items[store.Key{PK: store.PostPK(e.PostID), SK: store.SKMetadata}]
		if e.Expires < r.now || !ok || !r.follows(e.AuthorID) {
			continue
		}
		p, err := r.t.s.DecodePost(readOp, r.attrs, item, r.items[store.Key{PK: store.PostPK(e.PostID), SK: store.SKCount}])
		if err != nil {
			return nil, "", err
		}
		if p.Published() && p.AuthorID == e.AuthorID {
			cands = append(cands, candidate{place: e.SK, post: p})
		}
	}
	for i, a := range r.pulled {
		if r.left[i] && len(r.byAuthor[i]) > 0 {
			bound = max(bound, stringAttr(r.byAuthor[i][len(r.byAuthor[i])-1], store.AttrGSI1SK))
		}
		if !r.follows(a) {
			continue
		}
		for _, item := range r.byAuthor[i] {
			counter, indexed := r.counters[i][stringAttr(item, "id")]
			p, err := r.t.s.DecodePost(readOp, r.attrs, item, counter)
			if err != nil {
				return nil, "", err
			}
			cands = append(cands, candidate{stringAttr(item, store.AttrGSI1SK), p, r.counts && !indexed})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].place > cands[j].place })
	return cands, bound, nil
}

// take takes the page from the candidates, each post once, down to the
// bound, with its token; and the indexes of its posts left uncounted.
func (r *read) take(cands []candidate, bound string) (store.Page[store.Post], []int, error) {
	var (
		items     = []store.Post{}
		places    []string
		uncounted []int // indexes in items
	)
	seen := map[string]bool{}
	left := false // candidates not emitted
	for _, c := range cands {
		if seen[c.post.ID] {
			continue
		}
		if c.place < bound || len(items) == r.page.Limit {
			left = true
			break
		}
		seen[c.post.ID] = true
		if c.uncounted {
			uncounted = append(uncounted, len(items))
		}
		items = append(items, c.post)
		places = append(places, c.place)
	}
	token := func(place string) (string, error) {
		return r.t.s.Tokens().Encode(r.scope, store.Key{PK: PK(r.readerID), SK: place}.Attributes())
	}
	var next *string
	if left || bound != "" {
		resume := bound
		if len(items) == r.page.Limit || bound == "" {
			resume = places[len(places)-1]
		}
		t, err := token(resume)
		if err != nil {
			return store.Page[store.Post]{}, nil, err
		}
		next = &t
	}
	return store.NewPage(items, next, func(i int) (string, error) { return token(places[i]) }), uncounted, nil
}

// countPulled is the third round trip, only when counts are selected and
// the page holds pulled posts whose counters were not on GSI1: their
// counters, into posts.
func (r *read) countPulled(ctx context.Context, posts []store.Post, uncounted []int) error {
	if len(uncounted) == 0 {
		return nil
	}
	read := make([]store.Post, len(uncounted))
	for i, at := range uncounted {
		read[i] = posts[at]
	}
	if err := r.t.s.AddCounters(ctx, readOp, read); err != nil {
		return err
	}
	for i, at := range uncounted {
		posts[at] = read[i]
	}
	return nil
}

// pullMarkers returns the high-follower authors the reader's feed reads at
// read time, at most maxPulled, by author ID.
func (t *Table) pullMarkers(ctx context.Context, readerID string) ([]string, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), Limit: aws.Int32(maxPulled)}
	if err := keyQuery(in, keyIs(store.AttrPK, PK(readerID)).And(expression.Key(store.AttrSK).BeginsWith(prefixPull)), []string{"authorId"}); err != nil {
		return nil, err
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return nil, store.Fail(readOp, err)
	}
	authors := make([]string, 0, len(out.Items))
	for _, item := range out.Items {
		if a := stringAttr(item, "authorId"); store.ValidID(a) {
			authors = append(authors, a)
		}
	}
	return authors, nil
}

// window is the range of places a feed lists: the posts published in the
// last TTL (the entries' TTL, for the authors read at read time).
func (t *Table) window() (lo, hi string) { return placesSince(t.s.Now().Add(-TTL)) }

// postsBefore reads, on GSI1, up to limit of the author's posts published
// in the feed's window and before place ("": the newest), newest first, and
// whether more may follow.
func (t *Table) postsBefore(ctx context.Context, authorID, place string, limit int, attrs []string) ([]map[string]types.AttributeValue, bool, error) {
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), IndexName: aws.String(store.GSI1), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit))}
	lo, hi := t.window()
	if place != "" {
		hi = place
	}
	cond := keyIs(store.AttrGSI1PK, store.AuthorPK(authorID)).And(expression.Key(store.AttrGSI1SK).Between(expression.Value(lo), expression.Value(hi)))
	var projection []string
	if attrs != nil {
		projection = append([]string{store.AttrPK, store.AttrSK, store.AttrGSI1PK, store.AttrGSI1SK}, attrs...)
	}
	if err := keyQuery(in, cond, projection); err != nil {
		return nil, false, err
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return nil, false, store.Fail(readOp, err)
	}
	items := slices.DeleteFunc(out.Items, func(item map[string]types.AttributeValue) bool { return stringAttr(item, store.AttrGSI1SK) == place })
	return items, len(out.LastEvaluatedKey) > 0, nil
}

// countersBefore reads, on GSI1, the counters that IndexCounters put there
// of the posts postsBefore reads (up to limit), by post ID.
func (t *Table) countersBefore(ctx context.Context, authorID, place string, limit int) (map[string]map[string]types.AttributeValue, error) {
	lo, hi := t.window()
	if place != "" {
		hi = place
	}
	in := &dynamodb.QueryInput{TableName: aws.String(t.table), IndexName: aws.String(store.GSI1), ScanIndexForward: aws.Bool(false), Limit: aws.Int32(int32(limit))}
	cond := keyIs(store.AttrGSI1PK, store.AuthorPK(authorID)).And(expression.Key(store.AttrGSI1SK).Between(expression.Value(CountedSK(lo)), expression.Value(CountedSK(hi))))
	if err := keyQuery(in, cond, append([]string{store.AttrPK}, store.CountedAttrs(store.PostCounts)...)); err != nil {
		return nil, err
	}
	out, err := t.api.Query(ctx, in)
	if err != nil {
		return nil, store.Fail(readOp, err)
	}
	counters := make(map[string]map[string]types.AttributeValue, len(out.Items))
	for _, item := range out.Items {
		counters[strings.TrimPrefix(stringAttr(item, store.AttrPK), store.PostPK(""))] = item
	}
	return counters, nil
}
