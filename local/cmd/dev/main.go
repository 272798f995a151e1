// Command dev serves the GraphQL API on localhost, as AppSync would, over
// DynamoDB Local loaded with sample data (make dev). `dev token alice`
// prints a token that makes requests act as that sample user.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
)

func main() {
	if len(os.Args) == 3 && os.Args[1] == "token" {
		fmt.Println(devserver.Token(os.Args[2]))
		return
	}
	addr := flag.String("addr", "127.0.0.1:4000", "address to serve GraphQL on")
	flag.Parse()
	if err := run(*addr); err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		os.Exit(1)
	}
}

func run(addr string) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	api, err := devserver.Open(ctx, devserver.Config{Endpoint: db.Endpoint, Table: "appsync-dynamo-dev", Data: sample.Blog(10, 20, 30),
		Log: os.Stderr})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	url := "http://" + ln.Addr().String() + "/graphql"
	fmt.Printf(`GraphQL API on %s (DynamoDB Local on %s, sample data loaded; Ctrl-C stops both)

  curl -s %s -H 'content-type: application/json' \
    -d '{"query":"{ user(handle: \"alice\") { name posts(limit: 2) { items { title comments(limit: 3) { items { body author { name } } } } } } }"}'

As a signed-in user (mutations need one): add -H "authorization: $(make -s token USER=bob)"

Subscriptions (onCreateComment) speak AppSync's real-time protocol at ws://%s/graphql/realtime
`, url, db.Endpoint, url, ln.Addr())
	srv := &http.Server{Handler: devserver.Handler(api), ReadHeaderTimeout: 10 * time.Second}
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
