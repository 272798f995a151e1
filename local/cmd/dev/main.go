// Command dev serves the GraphQL API on localhost, as AppSync would, over
// DynamoDB Local loaded with sample data (make dev). `dev token alice`
// prints a token that makes requests act as that sample user.
package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/realtime"
	"github.com/example/appsync-dynamo/local/sample"
)

// listenTLS listens on addr with a new self-signed certificate, written to
// certFile for clients to trust.
func listenTLS(addr, certFile string) (net.Listener, error) {
	cert, certPEM, err := devserver.SelfSigned()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(certFile), 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}}), nil
}

// data is the sample data make dev serves.
func data() store.Dataset { return sample.Dev(time.Now()) }

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "token" {
		if err := token(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "dev token:", err)
			os.Exit(2)
		}
		return
	}
	addr := flag.String("addr", "127.0.0.1:4000", "address to serve GraphQL on")
	tlsAddr := flag.String("tls-addr", "127.0.0.1:4443", "address to serve it on over TLS too (Amplify connects to wss:// only); empty for none")
	certFile := flag.String("cert-out", ".build/dev-tls.pem", "where to write the TLS listener's self-signed certificate")
	consoleDir := flag.String("console", "local/console/node_modules", "the query page's npm packages (make dev installs them); empty for no page")
	readingName := flag.String("selection-reading", appsync.EveryOccurrence.String(),
		"how the local AppSync writes a merged field's selection, and the Lambda reads it: every-occurrence or first-occurrence")
	messagesName := flag.String("message-reading", realtime.UTF8Of245760.String(),
		"how the local AppSync writes a subscription message and measures it against 240 KB: utf8-245760, utf8-240000, escaped-245760 or escaped-240000")
	clientLimit := flag.Int64("client-limit", realtime.ClientLimits[0],
		"the most bytes of a client's real-time message the local AppSync reads: 32768 or 245760 (AppSync documents none)")
	flag.Parse()
	reading, err := appsync.ParseReading(*readingName)
	var messages realtime.MessageReading
	if err == nil {
		messages, err = realtime.ParseMessageReading(*messagesName)
	}
	if err == nil && !slices.Contains(realtime.ClientLimits, *clientLimit) {
		err = fmt.Errorf("no client limit %d (want one of %v)", *clientLimit, realtime.ClientLimits)
	}
	if err == nil {
		err = run(*addr, *tlsAddr, *certFile, *consoleDir, reading, messages, *clientLimit)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(addr, tlsAddr, certFile, consoleDir string, reading appsync.Reading, messages realtime.MessageReading, clientLimit int64) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	api, err := devserver.Open(ctx, devserver.Config{Endpoint: db.Endpoint, Table: "appsync-dynamo-dev", Data: data(),
		Log: os.Stderr, Console: consoleDir, Reading: &reading})
	if err != nil {
		return err
	}
	api.Hub.Messages, api.Hub.ClientLimit = messages, clientLimit
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/graphql"
	fmt.Printf(`GraphQL API on %s (DynamoDB Local on %s, sample data loaded; Ctrl-C stops both)

Query page (GraphiQL): http://%s/

  curl -s %s -H 'content-type: application/json' \
    -d '{"query":"{ user(handle: \"alice\") { name posts(limit: 2) { items { title comments(limit: 3) { items { body author { name } } } } } } }"}'

As a signed-in user (mutations need one): add -H "authorization: $(make -s token CALLER=bob)"

Subscriptions (onCreateComment) speak AppSync's real-time protocol at ws://%s/graphql/realtime

A field selected twice: the local AppSync writes the %s's selection, and the Lambda reads it so
(make dev SELECTION_READING=first-occurrence|every-occurrence; docs/deploying.md)

A subscription message is written and measured against AppSync's 240 KB as %s
(make dev MESSAGE_READING=utf8-245760|utf8-240000|escaped-245760|escaped-240000; docs/live.md)

A client's real-time message is read up to %d bytes, past which the connection closes 1009
(make dev CLIENT_LIMIT=32768|245760; docs/live.md)
`, url, db.Endpoint, ln.Addr(), url, ln.Addr(), reading, messages, clientLimit)
	srv := &http.Server{Handler: devserver.Handler(api), ReadHeaderTimeout: 10 * time.Second}
	if tlsAddr != "" {
		tlsLn, err := listenTLS(tlsAddr, certFile)
		if err != nil {
			return err
		}
		fmt.Printf(`
Over TLS (for Amplify, which connects to wss:// only): https://%s/graphql, with a self-signed
certificate written to %s (Node: NODE_EXTRA_CA_CERTS=%s)
`, tlsLn.Addr(), certFile, certFile)
		go srv.Serve(tlsLn)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	fmt.Println("\nstopped")
	return nil
}

// token prints a token for a sample user (dev token alice), or, with -new,
// for a user not in the data yet, who may then call createUser.
func token(args []string) error {
	fresh := len(args) == 2 && args[0] == "-new"
	if fresh {
		args = args[1:]
	}
	if len(args) != 1 || args[0] == "" {
		return errors.New("give a user: make token CALLER=alice (or CALLER=<name> NEW=1 for a user who has no profile yet)")
	}
	name := args[0]
	var known []string
	for _, u := range data().Users {
		known = append(known, u.Handle)
		if u.Handle == name && u.ID == "u_"+name {
			fmt.Println(devserver.Token(name))
			return nil
		}
	}
	if !fresh {
		return fmt.Errorf("%q is not a sample user (%s ... %s): give NEW=1 for a user who has no profile yet", name, strings.Join(known[:3], ", "), known[len(known)-1])
	}
	if !store.ValidID("u_" + name) {
		return fmt.Errorf("%q: a name of 1-62 characters of A-Z, a-z, 0-9, _ and -", name)
	}
	fmt.Println(devserver.Token(name))
	return nil
}
