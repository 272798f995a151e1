// Package bench measures what fixed GraphQL queries cost, through the local
// AppSync on one seeded table, under four layouts side by side in the same
// run: naive (package naive: one invocation per field and parent, one
// request per item), batched (AppSync batching and BatchGetItem, no
// prefetch: the seed's DataLoader layout), prefetch (direct Lambda
// resolvers; a parent reads its first children with it) and early return
// (this project: JavaScript child resolvers returning the answers a parent's
// invocation resolved). It reports Lambda invocations, DynamoDB requests,
// read capacity, sequential DynamoDB round trips, bytes between AppSync and
// the Lambda, and median latency.
package bench

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/feedtest"
	"github.com/example/appsync-dynamo/local/naive"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// Query is a benchmarked request.
type Query struct {
	Name   string
	Levels int // nesting levels with a resolver: the least number of invocations
	Text   string
	Caller string // the signed-in user it runs as; "" for an API key
}

// Queries returns the fixed set, over Data's IDs.
func Queries() []Query {
	d := Data()
	var ids []string
	for _, p := range d.Posts[1:51] {
		ids = append(ids, fmt.Sprintf("%q", p.ID))
	}
	return []Query{
		{SeedQuery, 4,
			`{ user(id: "u_alice") { name posts(limit: 10) { items { title comments { items { body author { name } } } } } } }`, ""},
		{PostWithPage, 3,
			`{ post(id: "` + d.Posts[1].ID + `") { title comments { items { body author { name } } } } }`, ""},
		{"post(id) { comments(order: NEWEST_FIRST) { author } }", 3,
			`{ post(id: "` + d.Posts[1].ID + `") { title comments(order: NEWEST_FIRST) { items { body author { name } } } } }`, ""},
		{"user(handle) { followers { handle } }", 2,
			`{ user(handle: "bob") { name followers(limit: 30) { items { handle } } } }`, ""},
		{"posts(ids) with 50 ids", 1,
			`{ posts(ids: [` + strings.Join(ids, ", ") + `]) { id title commentCount } }`, ""},
		{FeedQuery, 2, `{ feed(limit: 20) { items { title author { name } } } }`, sample.Carol},
	}
}

// The names of the queries the dollars chart draws.
const (
	SeedQuery     = "user { posts { comments { author } } } (10 posts x 20 comments, 30 authors)"
	PostWithPage  = "post(id) { comments { author } }"
	FeedQuery     = "feed(limit: 20) { author } (carol follows alice)"
	feedExpiresAt = 4102444800 // 2100: the entries outlive every run
)

// Data is the benchmark's data set: the sample users plus 50 posts by alice
// with 20 comments each by 30 distinct readers, who all follow bob; carol
// follows alice, her feed holding alice's posts.
func Data() store.Dataset {
	d := sample.Blog(50, 20, 30)
	feedtest.FollowWithFeed(&d, sample.Carol, sample.Alice, feedExpiresAt)
	return d
}

// Result is one query under one layout.
type Result struct {
	Invocations int
	Requests    int
	RCU         float64
	RoundTrips  int // sequential DynamoDB round trips
	Bytes       int // Lambda payloads, both ways
	Median      time.Duration
	// BilledMs is the invocations' durations as Lambda bills them (each
	// rounded up to the millisecond), in the round of the median latency:
	// measured in this process, against DynamoDB Local.
	BilledMs int
}

// Dollars is what a million of the query cost (Dollars).
func (r Result) Dollars() Dollars { return dollarsOf(r) }

// Layout names, in the order of Row.Results.
var Layouts = []string{"naive", "batched", "prefetch", "early return"}

// ChartedQueries are the queries docs/dollars.svg draws.
var ChartedQueries = []string{SeedQuery, PostWithPage, FeedQuery}

// Row is one query under every layout.
type Row struct {
	Query   Query
	Results []Result // by Layouts
}

// EarlyReturn and Batched return the results of the project's layout and of
// the seed's DataLoader layout it is compared with.
func (r Row) EarlyReturn() Result { return r.Results[3] }
func (r Row) Batched() Result     { return r.Results[1] }
func (r Row) Naive() Result       { return r.Results[0] }

// Run loads Data into a new table on the DynamoDB Local at endpoint and runs
// every query rounds times under each layout.
func Run(ctx context.Context, endpoint string, rounds int) ([]Row, error) {
	s, sch, err := open(ctx, endpoint, nil)
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	handler := func(opts ...resolver.Option) lambda.Handler {
		return lambda.NewHandler(resolver.New(s, quiet, slices.Concat(wired.Options(s), opts, []resolver.Option{resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence)})...))
	}
	served := slices.Concat(resolver.CoreRoutes, wired.Routes)
	clocks := make([]*billing, len(Layouts))
	timed := func(i int, h executor.Invoker) executor.Invoker {
		clocks[i] = &billing{Invoker: h}
		return clocks[i]
	}
	layouts := []*executor.Executor{
		executor.New(sch, timed(0, naive.New(s)), naive.Routes(), executor.WithDirectResolvers()),
		executor.New(sch, timed(1, handler(resolver.WithoutPrefetch(), resolver.WithoutAnswers())), served, executor.WithDirectResolvers()),
		executor.New(sch, timed(2, handler(resolver.WithoutAnswers())), served, executor.WithDirectResolvers()),
		executor.New(sch, timed(3, handler()), served),
	}
	var rows []Row
	for _, q := range Queries() {
		row := Row{Query: q, Results: make([]Result, len(layouts))}
		for i, e := range layouts {
			if row.Results[i], err = measure(ctx, e, clocks[i], q, rounds); err != nil {
				return nil, fmt.Errorf("%s (%s): %w", q.Name, Layouts[i], err)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// open loads Data into a new table on the DynamoDB Local at endpoint.
// open loads Data into a new table on the DynamoDB Local at endpoint, its
// store's requests through wrap (nil: none).
func open(ctx context.Context, endpoint string, wrap func(store.API) store.API) (*store.Store, *ast.Schema, error) {
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		return nil, nil, err
	}
	client := ddblocal.Client(endpoint)
	table := "bench-" + time.Now().Format("150405.000000")
	if _, err := client.CreateTable(ctx, ddblocal.CreateTableInput(ddblocal.WithoutStream(store.Schema), table)); err != nil {
		return nil, nil, err
	}
	var api store.API = client
	if wrap != nil {
		api = wrap(client)
	}
	s := store.New(api, table, cursor.New([]byte(cursor.DevelopmentKey)), wired.Store...)
	return s, sch, s.Load(ctx, Data())
}

func measure(ctx context.Context, e *executor.Executor, clock *billing, q Query, rounds int) (Result, error) {
	var r Result
	type round struct {
		took   time.Duration
		billed int
	}
	var took []round
	req := executor.Request{Query: q.Text}
	if q.Caller != "" {
		req.Identity = &appsync.Identity{Sub: q.Caller, Username: q.Caller}
	}
	for range max(rounds, 1) {
		clock.billedMs.Store(0)
		start := time.Now()
		resp := e.Execute(ctx, req)
		took = append(took, round{time.Since(start), int(clock.billedMs.Load())})
		if len(resp.Errors) > 0 {
			return r, fmt.Errorf("%s", resp.Errors[0].Message)
		}
		c := resp.Extensions["cost"].(executor.Cost)
		r.Invocations, r.RCU, r.Requests = c.LambdaInvocations, c.ReadCapacityUnits, 0
		r.RoundTrips, r.Bytes = c.DynamoDBRoundTrips, c.PayloadBytes
		for _, n := range c.DynamoDB {
			r.Requests += n
		}
	}
	slices.SortFunc(took, func(a, b round) int { return cmp.Compare(a.took, b.took) })
	r.Median, r.BilledMs = took[len(took)/2].took, took[len(took)/2].billed
	return r, nil
}

// billing is a handler that adds up its invocations' durations as Lambda
// bills them: each rounded up to the millisecond.
type billing struct {
	executor.Invoker
	billedMs atomic.Int64
}

func (b *billing) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	start := time.Now()
	out, err := b.Invoker.Invoke(ctx, payload)
	b.billedMs.Add(int64((time.Since(start) + time.Millisecond - 1) / time.Millisecond))
	return out, err
}

// Table formats rows as a Markdown table, with what the early-return
// layout saves against the batched one.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| Query | Layout | Lambda invocations | DynamoDB requests | Read capacity units | DynamoDB round trips | Lambda payload bytes | Median latency |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range rows {
		for i, res := range r.Results {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f | %d | %d | %s |\n", r.Query.Name, Layouts[i], res.Invocations, res.Requests,
				res.RCU, res.RoundTrips, res.Bytes, res.Median.Round(100*time.Microsecond))
		}
		old, now := r.Batched(), r.EarlyReturn()
		fmt.Fprintf(&b, "| | batched / early return | %s | %s | %s | %s | %s | %s |\n",
			ratio(float64(old.Invocations), float64(now.Invocations)), ratio(float64(old.Requests), float64(now.Requests)),
			ratio(old.RCU, now.RCU), ratio(float64(old.RoundTrips), float64(now.RoundTrips)),
			ratio(float64(old.Bytes), float64(now.Bytes)), ratio(float64(old.Median), float64(now.Median)))
	}
	return b.String()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", a/b)
}
