// Command invoke replays an AppSync event through the real bootstrap binary
// under the Lambda Runtime Interface Emulator, against DynamoDB Local loaded
// with the sample data, and prints the reply: what `sam local invoke` does,
// without Docker (make invoke EVENT=events/<file>.json).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/rie"
	"github.com/example/appsync-dynamo/local/sample"
)

func main() {
	event := flag.String("event", "", "the event file to replay (events/*.json)")
	bootstrap := flag.String("bootstrap", ".build/local/bootstrap", "the function binary, built for this machine")
	secretDelay := flag.Duration("secret-delay", -1, "read the token key from a Secrets Manager stand-in that answers after this long, as deployed (default: NEXT_TOKEN_KEY, no secret)")
	flag.Parse()
	if *event == "" {
		fmt.Fprintln(os.Stderr, "usage: invoke -event events/<file>.json [-bootstrap path]")
		os.Exit(2)
	}
	if err := run(*event, *bootstrap, *secretDelay); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run(eventFile, bootstrap string, secretDelay time.Duration) error {
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
	if err := warm(ctx, db.Endpoint, table, payload); err != nil {
		return err
	}
	env := []string{
		"TABLE_NAME=" + table, "AWS_ENDPOINT_URL_DYNAMODB=" + db.Endpoint,
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
	}
	if secretDelay < 0 {
		env = append(env, "NEXT_TOKEN_KEY=local-emulator-token-key") // in Lambda, the development key is refused
	} else {
		secrets := secretsManager(secretDelay)
		defer secrets.Close()
		env = append(env, "NEXT_TOKEN_SECRET_ARN="+secretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+secrets.URL)
	}
	emu, err := rie.Start(ctx, binary, bootstrap, env)
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

// secretARN is the token key's secret in the Secrets Manager stand-in.
const secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:NextTokenKey-local"

// secretsManager is a Secrets Manager stand-in that answers GetSecretValue of
// secretARN after delay, as a real call from a new environment takes time
// (its DNS, TCP and TLS handshakes and the request).
func secretsManager(delay time.Duration) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"ARN":%q,"Name":"NextTokenKey","SecretString":"local-secret-token-key"}`, secretARN)
	}))
}

// warm replays the event 20 times through the handler in this process, so
// that DynamoDB Local's JVM has compiled the requests it makes before the
// function's first invocation: that invocation's figure is then the
// function's own cold path, not DynamoDB Local's.
func warm(ctx context.Context, endpoint, table string, payload []byte) error {
	h := resolver.New(store.New(ddblocal.Client(endpoint), table, cursor.New([]byte("warm-up"))),
		slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard))
	for range 20 {
		if _, err := h.Invoke(ctx, payload); err != nil {
			var fail messages.InvokeResponse_Error
			if !errors.As(err, &fail) { // a field's own error (an event that fails) warms as well
				return err
			}
		}
	}
	return nil
}
