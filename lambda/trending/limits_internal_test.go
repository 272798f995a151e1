package trending

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/storetest"
)

// A flush at MaxCells, of the largest cells a state holds (64-character
// post IDs, counts of six digits and a sign, cells over a day), is one
// item DynamoDB takes: BeginFlush writes it whole, and Progress reads it
// back as it was.
func TestAFullFlushFitsItsItem(t *testing.T) {
	start := time.Now().UTC().Truncate(cellSpan)
	cells := map[Cell]Count{}
	for i := range MaxCells {
		id := fmt.Sprintf("%064d", i)
		cells[Cell{PostID: id, Start: start.Add(-time.Duration(i%288) * cellSpan)}] = Count{Likes: -999999, Comments: 999999}
	}
	counts := encodeCells(cells)
	t.Logf("%d cells: %d bytes", MaxCells, len(counts))
	if state := (state{from: strings.Repeat("9", 40), first: strings.Repeat("9", 40), last: strings.Repeat("9", 40), cells: cells}).encode(); len(state["cells"]) > 1<<20-1024 {
		t.Errorf("a full state is %d bytes: past Lambda's 1 MB", len(state["cells"]))
	}
	s, _ := storetest.NewStore(t, store.Dataset{})
	f := Flush{First: PadSequence("1"), Last: PadSequence("99999999999999999999"), Counts: counts}
	b := NewBuckets(s)
	if err := b.BeginFlush(t.Context(), "shardId-00000001796421311233-aa2669ec", f); err != nil {
		t.Fatalf("a full flush: %v", err)
	}
	progress, err := b.Progress(t.Context(), "shardId-00000001796421311233-aa2669ec")
	if err != nil || progress.Pending == nil || *progress.Pending != f {
		t.Fatalf("the pending flush read back: %v, as written: %v", err, progress.Pending != nil && *progress.Pending == f)
	}
	if back, err := decodeCells(progress.Pending.Counts); err != nil || len(back) != MaxCells {
		t.Errorf("decoded %d cells of %d: %v", len(back), MaxCells, err)
	}
}
