// Command invoke replays an AppSync event through the real bootstrap binary
// under the Lambda Runtime Interface Emulator, against DynamoDB Local loaded
// with the sample data, and prints the reply: what `sam local invoke` does,
// without Docker (make invoke EVENT=events/<file>.json).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"time"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/rie"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/wired"
)

func main() {
	event := flag.String("event", "", "the event file to replay (events/*.json)")
	bootstrap := flag.String("bootstrap", ".build/local/bootstrap", "the function binary, built for this machine")
	secretDelay := flag.Duration("secret-delay", -1, "read the token key from a Secrets Manager stand-in that answers after this long, as deployed (default: NEXT_TOKEN_KEY, no secret)")
	runs := flag.Int("runs", 1, "start the function this many times, each a new environment, and report medians (min-max)")
	against := flag.String("against", "", "another bootstrap to start as many times, alternating with -bootstrap, and report beside it")
	overTLS := flag.Bool("tls", false, "reach DynamoDB Local and the Secrets Manager stand-in over TLS, as the function reaches AWS: through a proxy whose certificate the function trusts beside the system's roots (SSL_CERT_FILE)")
	flag.Parse()
	if *event == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: invoke -event events/<file>.json [-bootstrap path] [-secret-delay d] [-runs n [-against path]]")
		os.Exit(2)
	}
	bootstraps := []string{*bootstrap}
	if *against != "" {
		bootstraps = append(bootstraps, *against)
	}
	if err := run(*event, bootstraps, *runs, *secretDelay, *overTLS); err != nil {
		fmt.Fprintln(os.Stderr, "invoke:", err)
		os.Exit(1)
	}
}

func run(eventFile string, bootstraps []string, runs int, secretDelay time.Duration, overTLS bool) error {
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
	endpoint, newServer := db.Endpoint, httptest.NewServer
	env := []string{"TABLE_NAME=" + table, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}
	var transport *http.Transport // to the endpoint, for the warm-up
	if overTLS {
		proxy, roots, err := tlsProxy(db.Endpoint)
		if err != nil {
			return err
		}
		defer proxy.Close()
		defer os.Remove(roots)
		defer os.Remove(roots + ".amazon")
		endpoint, newServer, transport = proxy.URL, httptest.NewTLSServer, proxy.Client().Transport.(*http.Transport)
		env = append(env, "SSL_CERT_FILE="+roots, "AWS_CA_BUNDLE="+roots+".amazon")
	}
	env = append(env, "AWS_ENDPOINT_URL_DYNAMODB="+endpoint)
	if err := warm(ctx, endpoint, transport, table, payload); err != nil {
		return err
	}
	if secretDelay < 0 {
		env = append(env, "NEXT_TOKEN_KEY=local-emulator-token-key") // in Lambda, the development key is refused
	} else {
		secrets := newServer(secretsManager(secretDelay))
		defer secrets.Close()
		env = append(env, "NEXT_TOKEN_SECRET_ARN="+secretARN, "AWS_ENDPOINT_URL_SECRETS_MANAGER="+secrets.URL)
	}
	reports := make([][]rie.Report, len(bootstraps))
	var reply []byte
	for i := range runs {
		for b, bootstrap := range bootstraps { // alternating, so that the machine's drift falls on both
			emu, err := rie.Start(ctx, binary, bootstrap, env)
			if err != nil {
				return err
			}
			r, out, err := twice(ctx, emu, payload)
			if i == 0 && b == 0 {
				reply = out
				fmt.Fprintf(os.Stderr, "--- function log\n%s", emu.Output())
			}
			emu.Stop()
			if err != nil {
				return err
			}
			reports[b] = append(reports[b], r)
		}
	}
	fmt.Fprintln(os.Stderr, "--- cold start and memory")
	for b, bootstrap := range bootstraps {
		fmt.Fprintf(os.Stderr, "%s: %s\n", bootstrap, rie.Summarize(reports[b]))
	}
	fmt.Fprintln(os.Stderr, "--- reply")
	var pretty bytes.Buffer
	if json.Indent(&pretty, reply, "", "  ") != nil {
		pretty.Write(reply)
	}
	fmt.Println(pretty.String())
	return nil
}

// twice invokes the function in emu with payload twice (the second warm,
// for the memory figure) and returns the emulator's report and the first
// reply.
func twice(ctx context.Context, emu *rie.Emulator, payload []byte) (rie.Report, []byte, error) {
	reply, err := emu.Invoke(ctx, payload)
	if err != nil {
		return rie.Report{}, nil, err
	}
	if _, err := emu.Invoke(ctx, payload); err != nil {
		return rie.Report{}, nil, err
	}
	r, err := emu.Report()
	if err != nil {
		return rie.Report{}, nil, err
	}
	if len(r.InvokeMs) != 2 {
		return rie.Report{}, nil, fmt.Errorf("the emulator reported %d invocations, not 2", len(r.InvokeMs))
	}
	return r, reply, nil
}

// secretARN is the token key's secret in the Secrets Manager stand-in.
const secretARN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:NextTokenKey-local"

// secretsManager is a Secrets Manager stand-in that answers GetSecretValue of
// secretARN after delay, as a real call from a new environment takes time
// (its DNS, TCP and TLS handshakes and the request).
func secretsManager(delay time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"ARN":%q,"Name":"NextTokenKey","SecretString":"local-secret-token-key"}`, secretARN)
	})
}

// systemRoots is where Debian and Ubuntu keep the system's certificate
// bundle (Amazon Linux's, which the function reads in Lambda, is as long:
// about 140 certificates).
const systemRoots = "/etc/ssl/certs/ca-certificates.crt"

// tlsProxy serves backend over TLS, with httptest's certificate for
// 127.0.0.1, and writes two bundles with that certificate: the system's
// roots beside it (the returned path, for SSL_CERT_FILE: what a function
// that trusts the system's roots parses, as it does in Lambda) and Amazon's
// five beside it (the path with ".amazon", for AWS_CA_BUNDLE: what
// awstls.HTTPClient parses first, as it does with Amazon's own in Lambda).
// The function then makes its TLS handshakes as in Lambda, while the proxy's
// warm connections to DynamoDB Local keep that server's own per-connection
// cost out of the figures.
func tlsProxy(backend string) (*httptest.Server, string, error) {
	u, err := url.Parse(backend)
	if err != nil {
		return nil, "", err
	}
	bundle, err := os.ReadFile(systemRoots)
	if err != nil {
		return nil, "", fmt.Errorf("the system's roots, to trust the proxy's certificate beside: %w", err)
	}
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(u))
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw})
	f, err := os.CreateTemp("", "invoke-roots-*.pem")
	if err == nil {
		_, err = f.Write(append(bundle, cert...))
		err = errors.Join(err, f.Close())
	}
	if err == nil {
		var roots []byte
		if roots, err = rie.AmazonRoots("."); err == nil {
			err = os.WriteFile(f.Name()+".amazon", append(roots, cert...), 0o600)
		}
	}
	if err != nil {
		proxy.Close()
		return nil, "", err
	}
	return proxy, f.Name(), nil
}

// warm replays the event through the handler in this process, each time on
// a new connection, so that DynamoDB Local's JVM has compiled both the
// requests the function makes and the path of a connection's first request
// (each environment's first invocation opens one) before the function's
// first invocation: that invocation's figure is then the function's own
// cold path, not DynamoDB Local's. (200 fresh connections took a fresh
// connection's GetItem from 1.06 to 0.80 ms here, a reused one's 0.55.)
// transport (nil: Go's default) reaches endpoint.
func warm(ctx context.Context, endpoint string, transport *http.Transport, table string, payload []byte) error {
	if transport == nil {
		transport = http.DefaultTransport.(*http.Transport)
	}
	for range 200 {
		conns := transport.Clone()
		client := ddblocal.Client(endpoint, func(o *dynamodb.Options) { o.HTTPClient = &http.Client{Transport: conns} })
		h := resolver.New(store.New(client, table, cursor.New([]byte("warm-up")), wired.Store...),
			slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard))
		if _, err := h.Invoke(ctx, payload); err != nil {
			var fail messages.InvokeResponse_Error
			if !errors.As(err, &fail) { // a field's own error (an event that fails) warms as well
				return err
			}
		}
		conns.CloseIdleConnections()
	}
	return nil
}
