// Command endtoend measures the 100-event Post.author and Comment.author
// batches and a Post.comments page read with a Query end to end, the Go
// function (under each selection reading) against a Node function written
// with Powertools and the AWS SDK, on one DynamoDB Local, interleaved (make
// bench), and writes the table into docs/benchmarks.md between its markers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/endtoend"
)

func main() {
	rounds := flag.Int("rounds", 20, "rounds, each function's calls of a case alternating which goes first")
	calls := flag.Int("calls", 50, "calls of a case by one function in a round")
	doc := flag.String("doc", "docs/benchmarks.md", "the document whose end-to-end table is rewritten (\"\" for none)")
	flag.Parse()
	if err := run(*rounds, *calls, *doc); err != nil {
		fmt.Fprintln(os.Stderr, "endtoend:", err)
		os.Exit(1)
	}
}

func run(rounds, calls int, doc string) error {
	ctx := context.Background()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	f, err := endtoend.Start(ctx, db.Endpoint, fmt.Sprintf("endtoend-%d", time.Now().UnixNano()))
	if err != nil {
		return err
	}
	defer f.Node.Close()
	results, err := endtoend.Run(ctx, f, endtoend.Cases(), rounds, calls)
	if err != nil {
		return err
	}
	table := endtoend.Table(results, rounds, calls)
	fmt.Print(table)
	if doc == "" {
		return nil
	}
	return endtoend.WriteInto(doc, table, time.Now())
}
