// Package bench measures what fixed GraphQL queries cost, through the local
// executor on a seeded table, for this project's resolvers and, side by side
// in the same run, for the naive layout (package naive): Lambda invocations,
// DynamoDB requests, capacity units and median latency.
package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/routes"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/naive"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/schema"
)

// Query is a benchmarked request.
type Query struct {
	Name   string
	Levels int // nesting levels with a resolver: the least number of invocations
	Text   string
}

// Queries returns the fixed set, over Data's IDs.
func Queries() []Query {
	d := Data()
	var ids []string
	for _, p := range d.Posts[1:51] {
		ids = append(ids, fmt.Sprintf("%q", p.ID))
	}
	return []Query{
		{"user { posts { comments { author } } } (10 posts x 20 comments, 30 authors)", 4,
			`{ user(id: "u_alice") { name posts(limit: 10) { items { title comments { items { body author { name } } } } } } }`},
		{"post(id) { comments { author } }", 3,
			`{ post(id: "` + d.Posts[1].ID + `") { title comments { items { body author { name } } } } }`},
		{"user(handle) { followers { handle } }", 2,
			`{ user(handle: "bob") { name followers(limit: 30) { items { handle } } } }`},
		{"posts(ids) with 50 ids", 1,
			`{ posts(ids: [` + strings.Join(ids, ", ") + `]) { id title commentCount } }`},
	}
}

// Data is the benchmark's data set: the sample users plus 50 posts by alice
// with 20 comments each by 30 distinct readers, who all follow bob.
func Data() store.Dataset { return sample.Blog(50, 20, 30) }

// Result is one query under one layout.
type Result struct {
	Invocations int
	Requests    int
	RCU         float64
	Median      time.Duration
}

// Row is one query under both layouts.
type Row struct {
	Query          Query
	Project, Naive Result
}

// Run loads Data into two new tables on the DynamoDB Local at endpoint and
// runs every query rounds times under each layout.
func Run(ctx context.Context, endpoint string, rounds int) ([]Row, error) {
	sch, err := schema.Load()
	if err != nil {
		return nil, err
	}
	client := ddblocal.Client(endpoint)
	open := func(table string) (*store.Store, error) {
		if _, err := client.CreateTable(ctx, store.Schema.CreateTableInput(table)); err != nil {
			return nil, err
		}
		s := store.New(client, table, cursor.New([]byte(cursor.DevelopmentKey)))
		return s, s.Load(ctx, Data())
	}
	suffix := time.Now().Format("150405.000")
	ps, err := open("bench-project-" + suffix)
	if err != nil {
		return nil, err
	}
	ns, err := open("bench-naive-" + suffix)
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	project := executor.New(sch, lambda.NewHandler(resolver.New(ps, quiet)), routes.All)
	baseline := executor.New(sch, naive.New(ns), naive.Routes())

	var rows []Row
	for _, q := range Queries() {
		row := Row{Query: q}
		if row.Project, err = measure(ctx, project, q, rounds); err != nil {
			return nil, fmt.Errorf("%s (project): %w", q.Name, err)
		}
		if row.Naive, err = measure(ctx, baseline, q, rounds); err != nil {
			return nil, fmt.Errorf("%s (naive): %w", q.Name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func measure(ctx context.Context, e *executor.Executor, q Query, rounds int) (Result, error) {
	var r Result
	var took []time.Duration
	for range max(rounds, 1) {
		start := time.Now()
		resp := e.Execute(ctx, executor.Request{Query: q.Text})
		took = append(took, time.Since(start))
		if len(resp.Errors) > 0 {
			return r, fmt.Errorf("%s", resp.Errors[0].Message)
		}
		c := resp.Extensions["cost"].(executor.Cost)
		r.Invocations, r.RCU, r.Requests = c.LambdaInvocations, c.ReadCapacityUnits, 0
		for _, n := range c.DynamoDB {
			r.Requests += n
		}
	}
	slices.Sort(took)
	r.Median = took[len(took)/2]
	return r, nil
}

// Table formats rows as a Markdown table.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| Query | Layout | Lambda invocations | DynamoDB requests | Read capacity units | Median latency |\n")
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	for _, r := range rows {
		for _, l := range []struct {
			name string
			res  Result
		}{{"this project", r.Project}, {"naive", r.Naive}} {
			fmt.Fprintf(&b, "| %s | %s | %d | %d | %.1f | %s |\n", r.Query.Name, l.name, l.res.Invocations, l.res.Requests, l.res.RCU, l.res.Median.Round(100*time.Microsecond))
		}
		fmt.Fprintf(&b, "| | naive / project | %s | %s | %s | %s |\n",
			ratio(float64(r.Naive.Invocations), float64(r.Project.Invocations)), ratio(float64(r.Naive.Requests), float64(r.Project.Requests)),
			ratio(r.Naive.RCU, r.Project.RCU), ratio(float64(r.Naive.Median), float64(r.Project.Median)))
	}
	return b.String()
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fx", a/b)
}
