//go:build !race && !nobulk

// The tests of this file run the package's code at volume (thousands of
// generated queries, the largest payloads, every cut point of a redo, the
// capacity workloads). The race detector would cost them 4 to 10 times
// their time for code the package's other tests run under it, concurrently:
// make test runs them in a pass of their own, without it; the copies of the
// tree that local/removal and local/extending test, whose changes are to
// wiring and not to volume, leave them out (nobulk) (docs/local.md).

package trending_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/storetest"
)

// A window's final invocation killed at every cut point (before and after
// each of its writes, the parts of a flush and the progress included),
// then invoked again with the records it had or with more of the window's
// time, by Lambda (its state as it was) or by a consumer started again
// (no state, the window's records from its start), counts every record
// exactly once: each window's ranking is the records' own count. The runs
// share one table, each on a stream shard of its own and a week of its own
// (its clock eight days after the last run's), so that no run's buckets
// are another's.
func TestAFlushRedoneAtAnyCutPointCountsEveryRecordOnce(t *testing.T) {
	data, _, posts := stormData(0, 5)
	data = store.Dataset{Users: data.Users[:1], Posts: data.Posts[len(data.Posts)-len(posts):]} // only what the ranking reads
	s, client := storetest.NewStore(t, data)
	run := 0
	next := func() redoRun {
		run++
		now := time.Now().UTC().Truncate(time.Hour).Add(30*time.Minute + time.Duration(run)*8*24*time.Hour)
		return redoRun{table: s.Table(), api: client, now: now, shard: fmt.Sprint("shard-", run), posts: posts}
	}
	for _, maxCells := range []int{trending.MaxCells, 3} { // one flush at the end; or flushes within the window too
		writes := next().cleanWrites(t, maxCells)
		for after := range writes + 1 {
			for _, landed := range []bool{false, true} {
				for _, more := range []bool{false, true} {
					for _, rd := range []redo{{"Lambda's retry", false}, {"a consumer started again", true}} {
						name := fmt.Sprintf("cells %d, cut after %d of %d writes, landed %v, later records %v, %s", maxCells, after, writes, landed, more, rd.name)
						r := next()
						t.Run(name, func(t *testing.T) { r.killAndRedo(t, maxCells, &cut{after: after, landed: landed}, rd, more) })
					}
				}
			}
		}
	}
}
