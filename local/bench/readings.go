package bench

// What each query costs under each reading of a merged field's selection:
// how AppSync writes it (selection.Reading: every occurrence's, as the local
// AppSync does by default, or the first occurrence's alone, as Amplify's
// simulator does) and how the Lambda reads it (resolver.WithSelectionReading:
// the deployed default is the first-occurrence reading, right under both).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/routes"
	"github.com/example/appsync-dynamo/lambda/selection"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/wired"
)

// Pairing is how AppSync writes a merged field's selection and how the
// Lambda reads it.
type Pairing struct{ AppSync, Lambda selection.Reading }

// Pairings are those measured: make dev's, the deployed default where
// AppSync writes every occurrence, and where it writes the first alone.
// (The Lambda reading every occurrence where AppSync writes the first is
// wrong, not dearer: make smoke refuses it.)
var Pairings = []Pairing{
	{selection.EveryOccurrence, selection.EveryOccurrence},
	{selection.EveryOccurrence, selection.FirstOccurrence},
	{selection.FirstOccurrence, selection.FirstOccurrence},
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
	Results []Result // by Pairings
}

// Readings loads Data into a new table on the DynamoDB Local at endpoint and
// runs each of ReadingQueries once under each pairing, through the local
// AppSync as deployed (child fields returning early).
func Readings(ctx context.Context, endpoint string) ([]ReadingRow, error) {
	s, sch, err := open(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	execs := make([]*executor.Executor, len(Pairings))
	for i, p := range Pairings {
		h := lambda.NewHandler(resolver.New(s, quiet, append(wired.Options(s), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(p.Lambda))...))
		execs[i] = executor.New(sch, h, slices.Concat(routes.Core, wired.Routes), executor.WithSelectionReading(p.AppSync))
	}
	var rows []ReadingRow
	for _, q := range ReadingQueries() {
		row := ReadingRow{Query: q, Results: make([]Result, len(execs))}
		for i, e := range execs {
			if row.Results[i], err = measure(ctx, e, &billing{}, q, 1); err != nil {
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
	io.WriteString(w, b.String())
}
