// Command event records the event the local AppSync sends the Lambda for
// one field while it runs a query over the sample data (make event), and
// writes it where the replays find it:
//
//	event -field User.bookmarks -caller alice -query '{ user(handle: "carol") { bookmarks { items { id } } } }' -out events/User.bookmarks.json
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/record"
)

func main() {
	var r record.Request
	flag.StringVar(&r.Field, "field", "", "the field whose event to record, as Type.field")
	flag.StringVar(&r.Query, "query", "", "the GraphQL request that resolves it")
	flag.StringVar(&r.Caller, "caller", "", "the sample user who sends it (alice, bob, carol); none for an API key")
	variables := flag.String("variables", "", "the request's variables, a JSON object")
	out := flag.String("out", "", "the file to write (default: standard output)")
	flag.Parse()
	if err := run(r, *variables, *out); err != nil {
		fmt.Fprintln(os.Stderr, "event:", err)
		os.Exit(1)
	}
}

func run(r record.Request, variables, out string) error {
	if r.Field == "" || r.Query == "" {
		return fmt.Errorf("give -field Type.field and -query (make event FIELD=Type.field QUERY='...')")
	}
	if variables != "" {
		if err := json.Unmarshal([]byte(variables), &r.Variables); err != nil {
			return fmt.Errorf("-variables: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	event, err := record.Event(ctx, db.Endpoint, "events", r)
	if err != nil {
		return err
	}
	if out == "" {
		_, err = os.Stdout.Write(event)
		return err
	}
	return os.WriteFile(out, event, 0o644)
}
