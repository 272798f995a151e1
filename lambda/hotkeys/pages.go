package hotkeys

import (
	"context"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Where a parent's children live, and how a page over them is read. A
// post's likes and comments and a user's followers are in the parent's own
// partition until it turns hot (writes.go), and in its
// shards as well after: a page reads the own partition's Query (one round
// trip) for a parent not hot, or that partition and the shards together,
// merged in the connection's order (one round trip too). A store learns
// that a parent is hot from what it reads (a marker the parent's partition
// holds once hot, a token that names shards, a write refused as hot) and
// keeps it (known): a parent stays hot. This file is the one place that
// decides how a page is read, as writes.go is where a child goes.

// sharding is one kind of a parent's children that turning hot spreads:
// how to find them and what tells a parent is hot.
type sharding struct {
	shardPK func(parent string, n int) string // the partition key of a parent's shard n
	reads   func(shards int) int              // the shards a page reads, of a parent with so many
	// newerFirst: children written once the parent is hot sort before any
	// token taken before (newest first, by time), so a page resumed from
	// such a token reads the own partition alone.
	newerFirst bool
	// besideIf says when a page of a parent not known hot reads the marker
	// beside its Query, because the Query itself may not meet it (a range
	// leaving it out, a token past it), and beside names it.
	besideIf func(c store.Children, page store.PageRequest) bool
	beside   func(parent string) store.Key
}

// The kinds of children spread over shards, by connection, and what marks
// each hot parent: a marker among the children's sort keys (isMarker),
// which a page of the own partition shows.
var kinds = map[string]sharding{
	"Post.likes": {shardPK: ShardPK, reads: every, newerFirst: true}, // LIKE#~ sorts first, newest first
	"Post.comments": {shardPK: ShardPK, reads: func(int) int { return CommentShards },
		// A range may leave out both markers (COMMENT#! and COMMENT#~), on a
		// first page and on any page oldest first, after which newer comments
		// (in shards, if the post has turned hot since) fall in the range.
		// (Newest first, such a comment comes before the token: a later page
		// was never to list it.)
		besideIf: func(c store.Children, page store.PageRequest) bool {
			return c.Ranged() && (page.NextToken == "" || !c.NewestFirst())
		},
		beside: func(postID string) store.Key { return store.Key{PK: store.PostPK(postID), SK: commentsLast} },
	},
	"User.followers": {shardPK: FollowersShardPK, reads: every, // FOLLOWER#! sorts first
		// A listing begun before the user turned hot: its shards may hold
		// followers after the token (IDs sort anywhere), and the marker sorts
		// before it.
		besideIf: func(_ store.Children, page store.PageRequest) bool { return page.NextToken != "" },
		beside:   func(userID string) store.Key { return store.Key{PK: store.UserPK(userID), SK: followersMarker} },
	},
}

// every reads all of a parent's shards.
func every(shards int) int { return shards }

// Page reads one page of c: from the shards too when the store knows the
// parent hot or the token names shards, otherwise from the own partition,
// switching to the shards, learnt, when that shows the parent hot.
func (l *Layer) Page(ctx context.Context, c store.Children, page store.PageRequest) (store.Page[store.Item], error) {
	sh, ok := kinds[c.Scope().Query]
	if !ok {
		return c.Own(ctx, page)
	}
	parent := c.Scope().Parent
	spread := func(shards int) (store.Page[store.Item], error) {
		return l.spreadPage(ctx, spreadOver{c: c, shards: sh.reads(shards), shard: func(n int) string { return sh.shardPK(parent, n) }}, page)
	}
	known := l.known(c.Scope().Query)
	if n := known.of(parent); n > 0 && !(sh.newerFirst && page.NextToken != "") {
		return spread(n)
	}
	if page.NextToken != "" {
		if _, n, err := l.spreadToken(c, page.NextToken); err == nil && n > 0 {
			return spread(n)
		}
	}
	var (
		res    store.Page[store.Item]
		marked bool
		err    error
	)
	if sh.besideIf != nil && sh.besideIf(c, page) {
		res, marked, err = l.ownMarked(ctx, c, page, sh.beside(parent))
	} else {
		res, err = c.Own(ctx, page)
	}
	if err == nil && (marked || slices.ContainsFunc(res.Items, func(item store.Item) bool { return isMarker(c.Prefix(), c.SortKey(item)) })) {
		known.learn(parent, HotShards)
		return spread(HotShards)
	}
	return res, err
}

// ownMarked is c's own page beside a GetItem of the marker at key (an item
// of a few bytes, eventually consistent: half a read unit), in one round
// trip: the page, and whether the marker is there.
func (l *Layer) ownMarked(ctx context.Context, c store.Children, page store.PageRequest, key store.Key) (store.Page[store.Item], bool, error) {
	var (
		wg      sync.WaitGroup
		out     *dynamodb.GetItemOutput
		markErr error
	)
	branch := cost.Together(ctx)
	markCtx, ownCtx := branch(), branch()
	wg.Go(func() {
		out, markErr = l.s.API().GetItem(markCtx, &dynamodb.GetItemInput{TableName: aws.String(l.s.Table()), Key: key.Attributes(),
			ProjectionExpression: aws.String(store.AttrPK)})
	})
	res, err := c.Own(ownCtx, page)
	wg.Wait()
	if err != nil {
		return store.Page[store.Item]{}, false, err
	}
	if markErr != nil {
		return store.Page[store.Item]{}, false, store.Fail("store."+c.Scope().Query, markErr)
	}
	return res, out.Item != nil, nil
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

// spreadOver is a hot connection: c its children in the parent's own
// partition, shards how many shards it reads too, and shard the partition
// key of shard n.
type spreadOver struct {
	c      store.Children
	shards int
	shard  func(n int) string
}

// spreadPage reads one page of sp, its items in the connection's order,
// with every item of every partition once across the pages.
func (l *Layer) spreadPage(ctx context.Context, sp spreadOver, page store.PageRequest) (store.Page[store.Item], error) {
	op := "store." + sp.c.Scope().Query
	if page.Limit < 1 || page.Limit > store.MaxLimit {
		return store.Page[store.Item]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	r, err := l.spreadRange(sp.c, page)
	if err != nil {
		return store.Page[store.Item]{}, err
	}
	parts := readParts(ctx, sp, r, page)
	for _, part := range parts {
		if part.err != nil {
			return store.Page[store.Item]{}, part.err
		}
	}
	return l.mergeParts(sp, parts, page)
}

// spreadRange is the sort-key range a page of sp reads in every partition,
// and the key it resumes after.
type spreadRange struct{ lo, hi, resume string }

func (l *Layer) spreadRange(c store.Children, page store.PageRequest) (spreadRange, error) {
	var r spreadRange
	r.lo, r.hi = c.Range()
	if page.NextToken != "" {
		sk, _, err := l.spreadToken(c, page.NextToken)
		if err != nil {
			return spreadRange{}, err
		}
		r.resume = sk
		if c.NewestFirst() {
			r.hi = sk
		} else {
			r.lo = sk
		}
	}
	return r, nil
}

// part is what a page read of one partition.
type part struct {
	items []store.Item
	sks   []string
	ends  []store.Item // each item's key, as a token names it
	last  string       // the last sort key read, when more may follow it
	err   error
}

// readParts queries each partition of sp, all at once (one round trip).
func readParts(ctx context.Context, sp spreadOver, r spreadRange, page store.PageRequest) []part {
	pks := []string{""} // the parent's own
	for n := range sp.shards {
		pks = append(pks, sp.shard(n))
	}
	parts := make([]part, len(pks))
	var wg sync.WaitGroup
	branch := cost.Together(ctx)
	for i, pk := range pks {
		ctx := branch()
		wg.Go(func() { parts[i] = readPart(ctx, sp.c, pk, r, page) })
	}
	wg.Wait()
	return parts
}

// readPart queries one partition pk ("": the parent's own) of c's
// connection in r: two more than the page, the item resumed after and a
// marker, which it leaves out.
func readPart(ctx context.Context, c store.Children, pk string, r spreadRange, page store.PageRequest) part {
	items, more, err := c.Read(ctx, pk, r.lo, r.hi, page.Limit+2, page.Attributes)
	if err != nil {
		return part{err: err}
	}
	var p part
	for _, item := range items {
		sk := c.SortKey(item)
		if more {
			p.last = sk
		}
		if sk == r.resume || isMarker(c.Prefix(), sk) {
			continue
		}
		p.items, p.sks, p.ends = append(p.items, item), append(p.sks, sk), append(p.ends, c.Resume(item))
	}
	return p
}

// mergeParts merges what the partitions read into one page in the
// connection's order, ending before anything past the first sort key after
// which a partition that has more may hold items not read.
func (l *Layer) mergeParts(sp spreadOver, parts []part, page store.PageRequest) (store.Page[store.Item], error) {
	order := strings.Compare // sort keys in the page's order
	if sp.c.NewestFirst() {
		order = func(a, b string) int { return strings.Compare(b, a) }
	}
	before := func(a, b string) bool { return order(a, b) < 0 }
	type merged struct {
		item store.Item
		sk   string
		end  store.Item
	}
	var all []merged
	bound := ""
	for _, pt := range parts {
		for i := range pt.items {
			all = append(all, merged{pt.items[i], pt.sks[i], pt.ends[i]})
		}
		if pt.last != "" && (bound == "" || before(pt.last, bound)) {
			bound = pt.last
		}
	}
	sort.Slice(all, func(i, j int) bool { return order(all[i].sk, all[j].sk) < 0 })
	var items, ends []store.Item
	left := false
	for _, m := range all {
		if len(items) == page.Limit || bound != "" && before(bound, m.sk) {
			left = true
			break
		}
		items, ends = append(items, m.item), append(ends, m.end)
	}
	token := func(end store.Item) (string, error) {
		key := maps.Clone(end)
		key["shards"] = &types.AttributeValueMemberS{Value: strconv.Itoa(sp.shards)}
		return l.s.Tokens().Encode(sp.c.Scope(), key)
	}
	var next *string
	// A partition that has more read page.Limit+2 items, of which at most
	// two (the item resumed after, a marker) were skipped: the page holds
	// at least one item whenever it is not the last.
	if (left || bound != "") && len(ends) > 0 {
		t, err := token(ends[len(ends)-1])
		if err != nil {
			return store.Page[store.Item]{}, err
		}
		next = &t
	}
	if items == nil {
		items = []store.Item{}
	}
	return store.NewPage(items, next, func(i int) (string, error) { return token(ends[i]) }), nil
}

// spreadToken reads a token of c's connection: the sort key it resumes
// after, and the shards read with the parent's own partition (0 for a token
// of that partition alone).
func (l *Layer) spreadToken(c store.Children, token string) (string, int, error) {
	op := "store." + c.Scope().Query
	start, err := l.s.Tokens().Decode(c.Scope(), token)
	if err != nil {
		return "", 0, err
	}
	shards := 0
	if n, ok := start["shards"].(*types.AttributeValueMemberS); ok {
		shards, _ = strconv.Atoi(n.Value)
		delete(start, "shards")
	}
	if !c.Holds(start) || shards < 0 || shards > HotShards {
		return "", 0, errs.E(op, errs.InvalidNextToken, "nextToken is not valid for this query")
	}
	return c.SortKey(start), shards, nil
}

// All hands each child of c to each: from the parent's own partition, and,
// for a parent known hot or whose marker that partition shows, from each
// of its shards.
func (l *Layer) All(ctx context.Context, c store.Children, each func(store.Item) bool) error {
	sh, ok := kinds[c.Scope().Query]
	if !ok {
		return c.All(ctx, "", each)
	}
	parent := c.Scope().Parent
	shards, done := l.known(c.Scope().Query).of(parent), false
	err := c.All(ctx, "", func(item store.Item) bool {
		if isMarker(c.Prefix(), c.SortKey(item)) {
			shards = HotShards
			return true
		}
		done = !each(item)
		return !done
	})
	for n := 0; n < sh.reads(shards) && err == nil && !done; n++ {
		err = c.All(ctx, sh.shardPK(parent, n), func(item store.Item) bool {
			done = !each(item)
			return !done
		})
	}
	return err
}
