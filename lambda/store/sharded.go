package store

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// Where a parent's items live, and how a page over them is read. A post's
// likes and comments and a user's followers are in the parent's own
// partition until it turns hot (hot.go, hotusers.go), and in its shards as
// well after: a page reads the own partition's Query (one round trip) for a
// parent not hot, or that partition and the shards together, merged in the
// connection's order (spreadPage, one round trip too). A store learns that
// a parent is hot from what it reads (a marker the parent's partition holds
// once hot, a token that names shards, a write refused as hot) and keeps it
// (hotKeys): a parent stays hot. This file is the one place that decides.

// sharding is one kind of a parent's items that turning hot spreads: how
// to find them and what tells a parent is hot.
type sharding[T any] struct {
	known   func(*Store) *hotKeys             // what a store has learned of such parents
	shardPK func(parent string, n int) string // the partition key of a parent's shard n
	reads   func(shards int) int              // the shards a page reads, of a parent with so many
	// newerFirst: items written once the parent is hot sort before any
	// token taken before (newest first, by time), so a page resumed from
	// such a token reads the own partition alone.
	newerFirst bool
	// besideIf says when a page of a parent not known hot reads the marker
	// beside its Query, because the Query itself may not meet it (a range
	// leaving it out, a token past it), and beside names it.
	besideIf func(q partitionQuery, page PageRequest) bool
	beside   func(parent string) Key
	// shows reports whether a page of the own partition holds the marker.
	shows func(p Page[T], page PageRequest) bool
}

// The kinds of items spread over shards, and what marks each hot parent.
var (
	likesOfPosts = sharding[Like]{
		known: func(s *Store) *hotKeys { return s.hot }, shardPK: ShardPK, reads: every, newerFirst: true,
		shows: func(p Page[Like], page PageRequest) bool { // LIKE#~ sorts first, newest first
			return page.NextToken == "" && len(p.Items) > 0 && p.Items[0].ID == ""
		},
	}
	commentsOfPosts = sharding[Comment]{
		known: func(s *Store) *hotKeys { return s.hot }, shardPK: ShardPK, reads: func(int) int { return CommentShards },
		// A range may leave out both markers, on a first page and on any page
		// oldest first, after which newer comments (in shards, if the post has
		// turned hot since) fall in the range. (Newest first, such a comment
		// comes before the token: a later page was never to list it.)
		besideIf: func(q partitionQuery, page PageRequest) bool {
			return q.lo != "" && (page.NextToken == "" || !q.newestFirst)
		},
		beside: func(postID string) Key { return Key{PostPK(postID), skHotCommentsLast} },
		shows: func(p Page[Comment], _ PageRequest) bool { // COMMENT#! and COMMENT#~, at either end
			return slices.ContainsFunc(p.Items, func(c Comment) bool { return c.ID == "" })
		},
	}
	followersOfUsers = sharding[Follow]{
		known: func(s *Store) *hotKeys { return s.hotUsers }, shardPK: FollowersShardPK, reads: every,
		// A listing begun before the user turned hot: its shards may hold
		// followers after the token (IDs sort anywhere), and the marker sorts
		// before it.
		besideIf: func(_ partitionQuery, page PageRequest) bool { return page.NextToken != "" },
		beside:   func(userID string) Key { return Key{UserPK(userID), skHotFollowers} },
		shows: func(p Page[Follow], _ PageRequest) bool { // FOLLOWER#! sorts first
			return len(p.Items) > 0 && p.Items[0].FollowerID == ""
		},
	}
)

// every reads all of a parent's shards.
func every(shards int) int { return shards }

// page reads one page of q, the connection over the own partition of its
// parent (q.scope.Parent): from the shards too when the store knows the
// parent hot or the token names shards, otherwise from the own partition,
// switching to the shards, learnt, when that shows the parent hot.
func (sh sharding[T]) page(ctx context.Context, s *Store, q partitionQuery, page PageRequest) (Page[T], error) {
	parent := q.scope.Parent
	spread := func(shards int) (Page[T], error) {
		return spreadPage[T](ctx, s, spreadOver{q: q, shards: sh.reads(shards), shard: func(n int) string { return sh.shardPK(parent, n) }}, page)
	}
	known := sh.known(s)
	if n := known.of(parent); n > 0 && !(sh.newerFirst && page.NextToken != "") {
		return spread(n)
	}
	if page.NextToken != "" {
		if _, n, err := s.spreadToken(q, page.NextToken); err == nil && n > 0 {
			return spread(n)
		}
	}
	var (
		res    Page[T]
		marked bool
		err    error
	)
	if sh.besideIf != nil && sh.besideIf(q, page) {
		res, marked, err = queryMarked[T](ctx, s, "store."+q.scope.Query, q, page, sh.beside(parent))
	} else {
		res, err = queryPage[T](ctx, s, q, page)
	}
	if err == nil && (marked || sh.shows(res, page)) {
		known.learn(parent, HotShards)
		return spread(HotShards)
	}
	return res, err
}

// A connection of a hot parent is spread over the parent's own partition,
// which holds what came before it turned hot, and its first shards
// partitions. A page reads them all at once, one Query each (one round
// trip), and merges them in the connection's order by sort key: a ULID, so
// the order is the items' time across partitions, as in one partition (a
// follower's ID for followers: the same order as in one partition). Its
// token is the last item's sort key under the parent's own partition key
// (the same key a token of one partition would carry, checked by the same
// query) and the shards read, so that a page resumed where nothing is known
// of the parent reads its shards too.

// spreadOver is a hot connection: q is its query of the parent's own
// partition (scope, index, order, range), shards how many shards it reads
// too, and shard the partition key of shard n.
type spreadOver struct {
	q      partitionQuery
	shards int
	shard  func(n int) string
}

// isMarker reports whether sk is a hot parent's marker in the range of a
// connection under prefix: prefix+"!" sorts before every ID, prefix+"~"
// after (hot.go).
func isMarker(prefix, sk string) bool { return sk == prefix+"!" || sk == prefix+"~" }

// spreadPage reads one page of sp, its items in the connection's order,
// with every item of every partition once across the pages.
func spreadPage[T any](ctx context.Context, s *Store, sp spreadOver, page PageRequest) (Page[T], error) {
	op := "store." + sp.q.scope.Query
	if page.Limit < 1 || page.Limit > MaxLimit {
		return Page[T]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	r, err := s.spreadRange(sp.q, page)
	if err != nil {
		return Page[T]{}, err
	}
	parts := readParts[T](ctx, s, sp, r, page)
	for _, p := range parts {
		if p.err != nil {
			return Page[T]{}, p.err
		}
	}
	return mergeParts(s, sp, parts, page)
}

// spreadRange is the sort-key range a page of sp reads in every partition,
// and the key it resumes after.
type spreadRange struct{ lo, hi, resume string }

func (s *Store) spreadRange(q partitionQuery, page PageRequest) (spreadRange, error) {
	r := spreadRange{lo: q.lo, hi: q.hi}
	if r.lo == "" {
		r.lo, r.hi = q.skPrefix, q.skPrefix+"~"
	}
	if page.NextToken != "" {
		sk, _, err := s.spreadToken(q, page.NextToken)
		if err != nil {
			return spreadRange{}, err
		}
		r.resume = sk
		if q.newestFirst {
			r.hi = sk
		} else {
			r.lo = sk
		}
	}
	return r, nil
}

// part is what a page read of one partition.
type part[T any] struct {
	items []T
	sks   []string
	ends  []map[string]types.AttributeValue // each item's key, as a token names it
	last  string                            // the last sort key read, when more may follow it
	err   error
}

// readParts queries each partition of sp, all at once (one round trip).
func readParts[T any](ctx context.Context, s *Store, sp spreadOver, r spreadRange, page PageRequest) []part[T] {
	q := sp.q
	pks := []string{q.pk}
	for n := range sp.shards {
		pks = append(pks, sp.shard(n))
	}
	parts := make([]part[T], len(pks))
	var wg sync.WaitGroup
	branch := cost.Together(ctx)
	for i, pk := range pks {
		ctx := branch()
		wg.Go(func() { parts[i] = readPart[T](ctx, s, q, pk, r, page) })
	}
	wg.Wait()
	return parts
}

// readPart queries one partition pk of q's connection in r.
func readPart[T any](ctx context.Context, s *Store, q partitionQuery, pk string, r spreadRange, page PageRequest) part[T] {
	read, err := readPartItems(ctx, s, q, pk, r, page)
	if err != nil {
		return part[T]{err: err}
	}
	p := part[T]{items: make([]T, len(read.items)), sks: read.sks, ends: read.ends, last: read.last}
	for i, item := range read.items {
		if err := unmarshal("store."+q.scope.Query, item, &p.items[i]); err != nil {
			return part[T]{err: err}
		}
		readOnly(&p.items[i], page.Attributes)
	}
	return p
}

// readPartItems sends readPart's Query and returns the items it read, as a
// part holds them but not yet decoded. It is apart from readPart so that the
// request is built once in the binary, not once for each item type.
func readPartItems(ctx context.Context, s *Store, q partitionQuery, pk string, r spreadRange, page PageRequest) (part[map[string]types.AttributeValue], error) {
	op := "store." + q.scope.Query
	keys := indexKeys(q.scope.Index)
	// Two more than the page: the item resumed after, and a marker.
	in := &dynamodb.QueryInput{TableName: aws.String(s.table), ScanIndexForward: aws.Bool(!q.newestFirst), Limit: aws.Int32(int32(page.Limit + 2))}
	if q.scope.Index != "" {
		in.IndexName = aws.String(q.scope.Index)
	}
	cond := partition(keys.PartitionKey, pk).And(expression.Key(keys.SortKey).Between(expression.Value(r.lo), expression.Value(r.hi)))
	var attrs []string
	if page.Attributes != nil {
		attrs = append(keyAttrs(q.scope.Index), page.Attributes...)
	}
	var p part[map[string]types.AttributeValue]
	if err := keyQuery(in, cond, attrs); err != nil {
		return p, err
	}
	out, err := s.api.Query(ctx, in)
	if err != nil {
		return p, Fail(op, err)
	}
	for _, item := range out.Items {
		sk := stringAttr(item, keys.SortKey)
		if len(out.LastEvaluatedKey) > 0 {
			p.last = sk
		}
		if sk == r.resume || isMarker(q.skPrefix, sk) {
			continue
		}
		end := lastKey(item, q.scope.Index)
		end[keys.PartitionKey] = str(q.pk) // a token names the parent's own partition
		p.items, p.sks, p.ends = append(p.items, item), append(p.sks, sk), append(p.ends, end)
	}
	return p, nil
}

// mergeParts merges what the partitions read into one page in the
// connection's order, ending before anything past the first sort key after
// which a partition that has more may hold items not read.
func mergeParts[T any](s *Store, sp spreadOver, parts []part[T], page PageRequest) (Page[T], error) {
	order := strings.Compare // sort keys in the page's order
	if sp.q.newestFirst {
		order = func(a, b string) int { return strings.Compare(b, a) }
	}
	before := func(a, b string) bool { return order(a, b) < 0 }
	type merged struct {
		item T
		sk   string
		end  map[string]types.AttributeValue
	}
	var all []merged
	bound := ""
	for _, p := range parts {
		for i := range p.items {
			all = append(all, merged{p.items[i], p.sks[i], p.ends[i]})
		}
		if p.last != "" && (bound == "" || before(p.last, bound)) {
			bound = p.last
		}
	}
	sort.Slice(all, func(i, j int) bool { return order(all[i].sk, all[j].sk) < 0 })
	out := Page[T]{Items: []T{}}
	var ends []map[string]types.AttributeValue
	left := false
	for _, m := range all {
		if len(out.Items) == page.Limit || bound != "" && before(bound, m.sk) {
			left = true
			break
		}
		out.Items, ends = append(out.Items, m.item), append(ends, m.end)
	}
	token := func(end map[string]types.AttributeValue) (string, error) {
		key := maps.Clone(end)
		key["shards"] = str(strconv.Itoa(sp.shards))
		return s.tokens.Encode(sp.q.scope, key)
	}
	out.after = func(i int) (string, error) { return token(ends[i]) }
	// A partition that has more read page.Limit+2 items, of which at most
	// two (the item resumed after, a marker) were skipped: the page holds
	// at least one item whenever it is not the last.
	if (left || bound != "") && len(ends) > 0 {
		t, err := token(ends[len(ends)-1])
		if err != nil {
			return Page[T]{}, err
		}
		out.NextToken = &t
	}
	return out.Fit(page.MaxBytes)
}

// hotKeys is what a store knows of which posts (or users) are hot, and
// their shards: a post stays hot until it is deleted, a user for good, so
// what it learns stays true.
type hotKeys struct {
	shards sync.Map     // ID -> int
	known  atomic.Int64 // how many
	// next picks the shard of a like: in turn from a random start, so that
	// each store spreads its likes evenly and stores start apart.
	next atomic.Uint64
}

func newHotKeys() *hotKeys {
	h := &hotKeys{}
	h.next.Store(rand.Uint64())
	return h
}

func (h *hotKeys) of(postID string) int {
	if n, ok := h.shards.Load(postID); ok {
		return n.(int)
	}
	return 0
}

func (h *hotKeys) learn(postID string, n int) {
	if n > 0 {
		if _, had := h.shards.Swap(postID, n); !had {
			h.known.Add(1)
		}
	}
}

// KnowsHot reports whether the store knows the post is hot (its likes and
// comments in shards); with "" whether it knows any post hot.
func (s *Store) KnowsHot(postID string) bool {
	if postID == "" {
		return s.hot.any()
	}
	return s.hot.of(postID) > 0
}

// any reports whether any is known hot.
func (h *hotKeys) any() bool { return h.known.Load() > 0 }

// queryMarked is queryPage beside a GetItem of the marker at key (an item
// of a few bytes, eventually consistent: half a read unit), in one round
// trip: the page, and whether the marker is there.
func queryMarked[T any](ctx context.Context, s *Store, op string, q partitionQuery, page PageRequest, key Key) (Page[T], bool, error) {
	var (
		wg      sync.WaitGroup
		out     *dynamodb.GetItemOutput
		markErr error
	)
	branch := cost.Together(ctx)
	markCtx, queryCtx := branch(), branch()
	wg.Go(func() {
		out, markErr = s.api.GetItem(markCtx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key.Attributes(),
			ProjectionExpression: aws.String(AttrPK)})
	})
	res, err := queryPage[T](queryCtx, s, q, page)
	wg.Wait()
	if err != nil {
		return Page[T]{}, false, err
	}
	if markErr != nil {
		return Page[T]{}, false, Fail(op, markErr)
	}
	return res, out.Item != nil, nil
}

// spreadToken reads a token of q's connection: the sort key it resumes
// after, and the shards read with the post's own partition (0 for a token
// of that partition alone).
func (s *Store) spreadToken(q partitionQuery, token string) (string, int, error) {
	op := "store." + q.scope.Query
	start, err := s.tokens.Decode(q.scope, token)
	if err != nil {
		return "", 0, err
	}
	shards := 0
	if n, ok := start["shards"].(*types.AttributeValueMemberS); ok {
		shards, _ = strconv.Atoi(n.Value)
		delete(start, "shards")
	}
	if !q.holds(start) || shards < 0 || shards > HotShards {
		return "", 0, errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
	}
	return start[indexKeys(q.scope.Index).SortKey].(*types.AttributeValueMemberS).Value, shards, nil
}
