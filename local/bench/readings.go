package bench

// What each query costs under each reading of a merged field's selection:
// how AppSync writes it (appsync.Reading: every occurrence's, as the local
// AppSync does by default, or the first occurrence's alone, as Amplify's
// simulator does) and how the Lambda reads it (resolver.WithSelectionReading:
// the safe reading is first-occurrence, right under both, which the function
// serves until the deployment's probe hands it AppSync's).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/wired"
)

// Pairing is how AppSync writes a merged field's selection and how the
// Lambda reads it.
type Pairing struct{ AppSync, Lambda appsync.Reading }

// Pairings are those measured: make dev's, the safe reading where AppSync
// writes every occurrence, and where it writes the first alone.
// (The Lambda reading every occurrence where AppSync writes the first is
// wrong, not dearer: the deployment's probe and make smoke refuse it.)
var Pairings = []Pairing{
	{appsync.EveryOccurrence, appsync.EveryOccurrence},
	{appsync.EveryOccurrence, appsync.FirstOccurrence},
	{appsync.FirstOccurrence, appsync.FirstOccurrence},
}

// ReadingQueries are Queries and the shapes of a merged field that client
// libraries write: a component's fragment (Relay, Apollo), and a root field
// selected again in a fragment on Query.
func ReadingQueries() []Query {
	post := Data().Posts[1].ID
	return append(Queries(),
		Query{"post(id) { ...PostView } (a fragment with comments and authors)", 3,
			`{ post(id: "` + post + `") { title ...PostView } }
			fragment PostView on Post { title comments { items { body author { name } } } }`, ""},
		Query{"post(id) again in a fragment on Query", 3,
			`{ post(id: "` + post + `") { title comments { items { body } } } ...Q }
			fragment Q on Query { post(id: "` + post + `") { comments { items { author { name postCount } } } } }`, ""},
	)
}

// ReadingRow is one query under every pairing.
type ReadingRow struct {
	Query   Query
	Results []Result         // by Pairings
	Items   []map[string]int // by Pairings: the items read, by key shape (itemShape)
}

// Readings loads Data into a new table on the DynamoDB Local at endpoint and
// runs each of ReadingQueries once under each pairing, through the local
// AppSync as deployed (child fields returning early).
func Readings(ctx context.Context, endpoint string) ([]ReadingRow, error) {
	read := &itemsRead{}
	s, sch, err := open(ctx, endpoint, func(api store.API) store.API { read.API = api; return read })
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	execs := make([]*executor.Executor, len(Pairings))
	for i, p := range Pairings {
		h := lambda.NewHandler(resolver.New(s, quiet, append(wired.Options(s), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(p.Lambda))...))
		execs[i] = executor.New(sch, h, slices.Concat(resolver.CoreRoutes, wired.Routes), executor.WithSelectionReading(p.AppSync))
	}
	var rows []ReadingRow
	for _, q := range ReadingQueries() {
		row := ReadingRow{Query: q, Results: make([]Result, len(execs)), Items: make([]map[string]int, len(execs))}
		for i, e := range execs {
			read.reset()
			row.Results[i], err = measure(ctx, e, &billing{}, q, 1)
			row.Items[i] = read.reset()
			if err != nil {
				return nil, fmt.Errorf("%s (AppSync %s, the Lambda %s): %w", q.Name, Pairings[i].AppSync, Pairings[i].Lambda, err)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// PrintReadings writes rows as a Markdown table of what can be counted
// exactly (no latency).
func PrintReadings(w io.Writer, rows []ReadingRow) {
	var b strings.Builder
	b.WriteString("| Query | AppSync writes | The Lambda reads | Lambda invocations | DynamoDB requests | Read capacity units | DynamoDB round trips | Lambda payload bytes |\n")
	b.WriteString("|---|---|---|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		for i, res := range r.Results {
			name := r.Query.Name
			if i > 0 {
				name = ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %d | %d | %.1f | %d | %d |\n", name, Pairings[i].AppSync, Pairings[i].Lambda,
				res.Invocations, res.Requests, res.RCU, res.RoundTrips, res.Bytes)
		}
	}
	b.WriteString("\nWhere the safe reading's read units go, against the Lambda reading every occurrence (AppSync writing every occurrence):\n\n")
	b.WriteString("| Query | Read capacity units, every / first | Items read more (+) or fewer (-), by key |\n")
	b.WriteString("|---|---:|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %.1f / %.1f | %s |\n", r.Query.Name, r.Results[0].RCU, r.Results[1].RCU, itemsMore(r.Items[0], r.Items[1]))
	}
	io.WriteString(w, b.String())
}

// itemsMore says which items, by key shape, were read more or fewer times
// under then than under was.
func itemsMore(was, then map[string]int) string {
	shapes := map[string]bool{}
	for shape := range was {
		shapes[shape] = true
	}
	for shape := range then {
		shapes[shape] = true
	}
	var diffs []string
	for _, shape := range slices.Sorted(maps.Keys(shapes)) {
		if d := then[shape] - was[shape]; d != 0 {
			diffs = append(diffs, fmt.Sprintf("%+d `%s`", d, shape))
		}
	}
	if len(diffs) == 0 {
		return "none"
	}
	return strings.Join(diffs, ", ")
}

// itemsRead is a store.API that counts the items its reads return, by key
// shape.
type itemsRead struct {
	store.API
	mu    sync.Mutex
	count map[string]int
}

// reset returns the counts so far, and starts again from none.
func (r *itemsRead) reset() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	counts := r.count
	r.count = map[string]int{}
	return counts
}

func (r *itemsRead) add(items ...map[string]types.AttributeValue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, item := range items {
		r.count[itemShape(item)]++
	}
}

// itemShape is an item's key with its IDs left out: "USER# #COUNT" for a
// user's counter item, "POST# COMMENT#" for a comment.
func itemShape(item map[string]types.AttributeValue) string {
	shape := func(attr string) string {
		s, _ := item[attr].(*types.AttributeValueMemberS)
		if s == nil {
			return "?"
		}
		if strings.HasPrefix(s.Value, "#") {
			return s.Value
		}
		prefix, _, _ := strings.Cut(s.Value, "#")
		return prefix + "#"
	}
	return shape(store.AttrPK) + " " + shape(store.AttrSK)
}

func (r *itemsRead) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	out, err := r.API.GetItem(ctx, in, opts...)
	if err == nil && out.Item != nil {
		r.add(out.Item)
	}
	return out, err
}

func (r *itemsRead) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	out, err := r.API.Query(ctx, in, opts...)
	if err == nil {
		r.add(out.Items...)
	}
	return out, err
}

func (r *itemsRead) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	out, err := r.API.BatchGetItem(ctx, in, opts...)
	if err == nil {
		for _, items := range out.Responses {
			r.add(items...)
		}
	}
	return out, err
}
