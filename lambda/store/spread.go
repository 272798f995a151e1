package store

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
)

// A connection of a hot post (its likes, its comments) is spread over the
// post's own partition, which holds what came before it turned hot, and
// its first shards partitions (ShardPK). A page reads them all at once,
// one Query each (one round trip), and merges them in the connection's
// order by sort key: a ULID, so the order is the items' time across
// partitions, as in one partition. Its token is the last item's sort key
// under the post's own partition key (the same key a token of one
// partition would carry, checked by the same query) and the shards read,
// so that a page resumed where nothing is known of the post reads its
// shards too.

// spread is a hot connection: q is its query of the parent's own
// partition (scope, index, order, range), shards how many shards it reads
// too, and shard the partition key of shard n.
type spread struct {
	q      partitionQuery
	shards int
	shard  func(n int) string
}

// postSpread is a hot post's connection of q, over shards of its shards.
func postSpread(q partitionQuery, shards int) spread {
	return spread{q: q, shards: shards, shard: func(n int) string { return ShardPK(q.scope.Parent, n) }}
}

// isMarker reports whether sk is a hot post's marker in the range of a
// connection under prefix: prefix+"!" sorts before every ID, prefix+"~"
// after (hot.go).
func isMarker(prefix, sk string) bool { return sk == prefix+"!" || sk == prefix+"~" }

// spreadPage reads one page of sp, its items in the connection's order,
// with every item of every partition once across the pages.
func spreadPage[T any](ctx context.Context, s *Store, sp spread, page PageRequest) (Page[T], error) {
	q := sp.q
	op := "store." + q.scope.Query
	if page.Limit < 1 || page.Limit > MaxLimit {
		return Page[T]{}, errs.E(op, errs.Validation, "limit must be between 1 and 100")
	}
	lo, hi := q.lo, q.hi
	if lo == "" {
		lo, hi = q.skPrefix, q.skPrefix+"~"
	}
	resume := "" // the sort key the page resumes after
	if page.NextToken != "" {
		sk, _, err := s.spreadToken(q, page.NextToken)
		if err != nil {
			return Page[T]{}, err
		}
		resume = sk
		if q.newestFirst {
			hi = resume
		} else {
			lo = resume
		}
	}
	pks := []string{q.pk}
	for n := range sp.shards {
		pks = append(pks, sp.shard(n))
	}
	keys := indexKeys(q.scope.Index)
	type part struct {
		items []T
		sks   []string
		ends  []map[string]types.AttributeValue // each item's key, as a token names it
		last  string                            // the last sort key read, when more may follow it
		err   error
	}
	parts := make([]part, len(pks))
	var wg sync.WaitGroup
	branch := cost.Together(ctx)
	for i, pk := range pks {
		ctx := branch()
		wg.Go(func() {
			// Two more than the page: the item resumed after, and a marker.
			in := &dynamodb.QueryInput{TableName: aws.String(s.table), ScanIndexForward: aws.Bool(!q.newestFirst), Limit: aws.Int32(int32(page.Limit + 2))}
			if q.scope.Index != "" {
				in.IndexName = aws.String(q.scope.Index)
			}
			cond := partition(keys.PartitionKey, pk).And(expression.Key(keys.SortKey).Between(expression.Value(lo), expression.Value(hi)))
			var attrs []string
			if page.Attributes != nil {
				attrs = append(keyAttrs(q.scope.Index), page.Attributes...)
			}
			if err := keyQuery(in, cond, attrs); err != nil {
				parts[i].err = err
				return
			}
			out, err := s.api.Query(ctx, in)
			if err != nil {
				parts[i].err = fail(op, err)
				return
			}
			for _, item := range out.Items {
				sk := stringAttr(item, keys.SortKey)
				if len(out.LastEvaluatedKey) > 0 {
					parts[i].last = sk
				}
				if sk == resume || isMarker(q.skPrefix, sk) {
					continue
				}
				var v T
				if err := unmarshal(op, item, &v); err != nil {
					parts[i].err = err
					return
				}
				readOnly(&v, page.Attributes)
				end := lastKey(item, q.scope.Index)
				end[keys.PartitionKey] = str(q.pk) // a token names the parent's own partition
				parts[i].items, parts[i].sks, parts[i].ends = append(parts[i].items, v), append(parts[i].sks, sk), append(parts[i].ends, end)
			}
		})
	}
	wg.Wait()
	// order compares sort keys in the page's order.
	order := strings.Compare
	if q.newestFirst {
		order = func(a, b string) int { return strings.Compare(b, a) }
	}
	before := func(a, b string) bool { return order(a, b) < 0 }
	type merged struct {
		item T
		sk   string
		end  map[string]types.AttributeValue
	}
	var all []merged
	// bound is the first sort key past which a partition that has more may
	// hold items not read: the page ends before anything after it.
	bound := ""
	for _, p := range parts {
		if p.err != nil {
			return Page[T]{}, p.err
		}
		for i := range p.items {
			all = append(all, merged{p.items[i], p.sks[i], p.ends[i]})
		}
		if p.last != "" && (bound == "" || before(p.last, bound)) {
			bound = p.last
		}
	}
	slices.SortFunc(all, func(a, b merged) int { return order(a.sk, b.sk) })
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
		return s.tokens.Encode(q.scope, key)
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
	if page.MaxBytes > 0 && len(out.Items) > 0 {
		return out.Cut(max(fitBytes(out.Items, page.MaxBytes), 1))
	}
	return out, nil
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
