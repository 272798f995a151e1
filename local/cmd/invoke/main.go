// Command invoke replays an AppSync event through the real bootstrap binary
// under the Lambda Runtime Interface Emulator, against DynamoDB Local loaded
// with the sample data, and prints the reply: what `sam local invoke` does,
// without Docker (make invoke EVENT=events/<file>.json).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/rie"
	"github.com/example/appsync-dynamo/local/sample"
)

func main() {
	event := flag.String("event", "", "the event file to replay (events/*.json)")
	bootstrap := flag.String("bootstrap", ".build/local/bootstrap", "the function binary, built for this machine")
	flag.Parse()
	if *event == "" {
		fmt.Fprintln(os.Stderr, "usage: invoke -event events/<file>.json [-bootstrap path]")
		os.Exit(2)
	}
	if err := run(*event, *bootstrap); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run(eventFile, bootstrap string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	payload, err := os.ReadFile(eventFile)
	if err != nil {
		return err
	}
	binary, err := rie.Binary()
	if err != nil {
		return err
	}
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	const table = "appsync-dynamo-invoke"
	if err := ddblocal.Seed(ctx, db.Endpoint, table, sample.Data()); err != nil {
		return err
	}
	emu, err := rie.Start(ctx, binary, bootstrap, []string{
		"TABLE_NAME=" + table, "AWS_ENDPOINT_URL_DYNAMODB=" + db.Endpoint,
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"NEXT_TOKEN_KEY=local-emulator-token-key", // in Lambda, the development key is refused
	})
	if err != nil {
		return err
	}
	defer emu.Stop()
	reply, err := emu.Invoke(ctx, payload)
	if err != nil {
		return err
	}
	if _, err := emu.Invoke(ctx, payload); err != nil { // a warm invocation, for the memory figure
		return err
	}
	fmt.Fprintf(os.Stderr, "--- function log\n%s", emu.Output())
	if r, err := emu.Report(); err == nil && len(r.InvokeMs) == 2 {
		fmt.Fprintf(os.Stderr, "--- cold start and memory\ninit %.1f ms, first invocation %.1f ms, second %.1f ms, peak RSS after two invocations %d KiB\n",
			r.InitMs, r.InvokeMs[0], r.InvokeMs[1], r.PeakRSSKiB)
	} else {
		fmt.Fprintf(os.Stderr, "--- cold start and memory: not measured (%v)\n", err)
	}
	fmt.Fprintln(os.Stderr, "--- reply")
	var pretty bytes.Buffer
	if json.Indent(&pretty, reply, "", "  ") != nil {
		pretty.Write(reply)
	}
	fmt.Println(pretty.String())
	return nil
}
