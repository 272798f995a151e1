package trending_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/golden"
	"github.com/example/appsync-dynamo/local/storetest"
)

var update = flag.Bool("update", false, "rewrite testdata/costs.md from this run")

// ViralPosts is the viral hour's posts: 10,000 likes a second over 1,000
// posts, one of them taking half.
const ViralPosts = 1000

// What the aggregator writes for one stream shard's window of the viral
// hour (every one of its posts liked, most commented) and what a ranking
// reads then, measured on DynamoDB Local (its consumed capacity, by item
// size) into testdata/costs.md, which docs/trending.md carries.
func TestWhatTrendingCosts(t *testing.T) {
	now := time.Now().UTC()
	data, _, posts := stormData(0, ViralPosts)
	s, _ := storetest.NewStore(t, data, store.WithClock(func() time.Time { return now }))
	b := trending.NewBuckets(s, trending.WithKeep(0))
	cells := map[trending.Cell]trending.Count{}
	for i := range posts {
		c := trending.Count{Likes: 5, Comments: 1} // a like a second, and a few comments
		if i == 0 {
			c = trending.Count{Likes: 5000 * ViralPosts / 2, Comments: 1}
		}
		cells[trending.CellOf(posts[i], now)] = c
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "| %d posts, one stream shard | requests | write units | read units |\n|---|---:|---:|---:|\n", ViralPosts)
	for i, what := range []string{"a window's counts, flushed: its counts kept, its parts, the progress", "the same counts in the next window"} {
		ctx, meter := cost.WithMeter(t.Context())
		f := trending.Flush{First: trending.PadSequence(fmt.Sprint(2*i + 1)), Last: trending.PadSequence(fmt.Sprint(2*i + 2)), Counts: trending.EncodeCells(cells)}
		if err := b.BeginFlush(ctx, "shardId-1", f); err != nil {
			t.Fatal(err)
		}
		if err := b.Apply(ctx, "shardId-1", f.First, cells); err != nil {
			t.Fatal(err)
		}
		if err := b.SetProgress(ctx, "shardId-1", f.Last); err != nil {
			t.Fatal(err)
		}
		sum := meter.Summary()
		fmt.Fprintf(&out, "| %s | %d UpdateItem | %g | %g |\n", what, sum.Requests["UpdateItem"], sum.Write, sum.Read)
	}
	ctx, meter := cost.WithMeter(t.Context())
	if _, err := b.Progress(ctx, "shardId-1"); err != nil {
		t.Fatal(err)
	}
	sum := meter.Summary()
	fmt.Fprintf(&out, "| every invocation: the shard's progress | %d GetItem | %g | %g |\n", sum.Requests["GetItem"], sum.Write, sum.Read)
	for _, w := range []trending.Window{trending.Hour, trending.Day, trending.Week} {
		ctx, meter := cost.WithMeter(t.Context())
		if _, err := b.Ranking(ctx, w, trending.MaxPosts); err != nil {
			t.Fatal(err)
		}
		sum := meter.Summary()
		fmt.Fprintf(&out, "| trending(%s), one environment's refresh: its buckets (%d keys), then its top %d posts | %d BatchGetItem, %d round trips | %g | %g |\n", w,
			trending.Spans[w].Buckets*trending.Spans[w].Parts, trending.MaxPosts, sum.Requests["BatchGetItem"], costdetail.RoundTrips(meter.Calls()), sum.Write, sum.Read)
	}
	golden.File(t, "testdata/costs.md", out.Bytes(), *update, "go test ./lambda/trending -run TestWhatTrendingCosts -update")
	doc, err := os.ReadFile("../../docs/trending.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(doc, out.Bytes()) {
		t.Errorf("docs/trending.md does not carry testdata/costs.md")
	}
}

// The figures docs/trending.md, docs/table.md and the schema state about
// the design are the code's.
func TestTheDocumentsFiguresAreTheCodes(t *testing.T) {
	read := func(path string) string {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(strings.Fields(strings.ReplaceAll(string(raw), "#", " ")), " ")
	}
	schema, doc, table := read("schema.graphql"), read("../../docs/trending.md"), read("../../docs/table.md")
	h, d, w := trending.Spans[trending.Hour], trending.Spans[trending.Day], trending.Spans[trending.Week]
	windowS, ttlS := int(trending.StreamWindow.Seconds()), int(trending.KeepFor.Seconds())
	for _, c := range []struct{ text, in, name string }{
		{fmt.Sprintf("%d-second tumbling window", windowS), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("%d seconds in each Lambda execution environment's memory", ttlS), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("about %d seconds", windowS+10), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("at most %d (limit, 20 by default)", trending.MaxPosts), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("HOUR is the last %d five-minute buckets", h.Buckets), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("DAY the last %d hours, WEEK the last %d UTC days", d.Buckets, w.Buckets), schema, "lambda/trending/schema.graphql"},
		{fmt.Sprintf("(%d x %d for the hour, %d x %d for the day, %d x %d for the week,", h.Buckets, h.Parts, d.Buckets, d.Parts, w.Buckets, w.Parts), table, "docs/table.md"},
		{fmt.Sprintf("once per %d s per execution environment", ttlS), table, "docs/table.md"},
		{fmt.Sprintf("a %d-second tumbling window", windowS), doc, "docs/trending.md"},
		{fmt.Sprintf("%d parts", h.Parts), doc, "docs/trending.md"},
		{fmt.Sprintf("%d parts", w.Parts), doc, "docs/trending.md"},
		{fmt.Sprintf("%d cells", trending.MaxCells), doc, "docs/trending.md"},
		{fmt.Sprintf("for %d seconds", ttlS), doc, "docs/trending.md"},
	} {
		if !strings.Contains(c.in, c.text) {
			t.Errorf("%s does not say %q", c.name, c.text)
		}
	}
}
