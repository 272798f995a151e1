// Command bench prints what the fixed benchmark queries cost under this
// project's resolvers and under the naive layout, and what every mutation
// costs on targets of each size (make bench).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/ddblocal"
)

func main() {
	rounds := flag.Int("rounds", 15, "runs of each query; the median latency is reported")
	chartPath = flag.String("chart", "docs/dollars.svg", "where to write the chart of dollars per million queries")
	flag.Parse()
	if err := run(*rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

var chartPath *string

func run(rounds int) error {
	ctx := context.Background()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	rows, err := bench.Run(ctx, db.Endpoint, rounds)
	if err != nil {
		return err
	}
	fmt.Print(bench.Table(rows))
	fmt.Println("\nWhat a million of each query costs, in dollars (local/prices; Lambda's duration as measured here, against DynamoDB Local):")
	fmt.Println()
	bench.PrintDollars(os.Stdout, rows)
	var chart bytes.Buffer
	bench.DollarsChart(&chart, bench.PricedQueries(rows, bench.ChartedQueries...))
	if err := os.WriteFile(*chartPath, chart.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Printf("\n(chart: %s)\n", *chartPath)
	writes, err := bench.Writes(ctx, db.Endpoint)
	if err != nil {
		return err
	}
	fmt.Println("\nWhat every mutation costs (DynamoDB Local's consumed capacity, with index detail):")
	fmt.Println()
	bench.PrintWrites(os.Stdout, writes)
	fmt.Println("\nWhat a million deliveries of live updates cost, in dollars (local/prices; the pushed feed's from the pushFeed row above):")
	fmt.Println()
	bench.PrintLiveDollars(os.Stdout, writes, bench.PushChunk)
	projections, err := bench.ProjectionCosts(ctx, db.Endpoint)
	if err != nil {
		return err
	}
	fmt.Println("\nWhat each projection of GSI1 costs (DynamoDB Local's consumed capacity):")
	fmt.Println()
	bench.PrintProjections(os.Stdout, projections)
	fanOuts, err := bench.FanOuts(ctx, db.Endpoint, 10, 1000, 100000)
	if err != nil {
		return err
	}
	pages, err := bench.FeedPages(ctx, db.Endpoint, 50, 10)
	if err != nil {
		return err
	}
	fmt.Println("\nThe feed: the projector's fan-out of one published post, and a page of the feed (50 authors followed, 10 posts each):")
	fmt.Println()
	bench.PrintFeed(os.Stdout, fanOuts, pages)
	return nil
}
