// Command capacity runs the capacity model's workloads on DynamoDB Local
// (package capacity), prints what each sustains by DynamoDB's documented
// rules and where it is limited, and writes the figures as JSON (make
// capacity).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/capacity"
	"github.com/example/appsync-dynamo/local/ddblocal"
)

func main() {
	out := flag.String("json", ".build/capacity.json", "where to write the figures")
	chart := flag.String("chart", "docs/capacity.svg", "where to draw the chart")
	top := flag.Int("top", 3, "partition keys shown per workload")
	flag.Parse()
	if err := run(*out, *chart, *top); err != nil {
		fmt.Fprintln(os.Stderr, "capacity:", err)
		os.Exit(1)
	}
}

func run(out, chart string, top int) error {
	ctx := context.Background()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	client := ddblocal.Client(db.Endpoint)
	table := "capacity-" + time.Now().Format("150405.000")
	if _, err := client.CreateTable(ctx, ddblocal.CreateTableInput(store.Schema, table)); err != nil { // with its stream: the projector's share is counted
		return err
	}
	e, err := capacity.NewEnv(ctx, db.Endpoint, table)
	if err != nil {
		return err
	}
	recorded, err := capacity.Run(ctx, e, capacity.Workloads())
	if err != nil {
		return err
	}
	results := capacity.Cost(recorded, capacity.Documented{})
	fmt.Printf("Each workload by DynamoDB's documented rules (%d operations each, by %d users; a partition key serves %d RCU and %d WCU a second):\n\n",
		capacity.Ops, capacity.Ops, capacity.PartitionReadUnits, capacity.PartitionWriteUnits)
	capacity.Print(os.Stdout, results, top)
	for _, r := range results {
		if k := r.After.Kept; k != nil {
			fmt.Printf("\n%s (hot): a page served from memory took %.1f ms here (the median of %d, through the local AppSync over DynamoDB Local); the model takes %.0f ms.\n",
				r.Name, 1000*k.MeasuredPageSeconds, capacity.Ops-1, 1000*k.PageSeconds)
		}
	}
	if err := capacity.WriteJSON(out, results); err != nil {
		return err
	}
	f, err := os.Create(chart)
	if err != nil {
		return err
	}
	capacity.Chart(f, results)
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Println("\nwrote", out, "and", chart)
	return nil
}
