// Package awstls is a speed-up of a new execution environment's first
// request: its HTTP client's TLS connections trust Amazon's five roots
// before the system's (so the first handshake does not wait for the
// system's bundle to be parsed), and the first connection to DynamoDB is
// opened during init (preconnect). Its gain, measured by make invoke over
// TLS: docs/benchmarks.md#cold-start. It is installed by one line in each
// function's main (the option Install, given to awsenv.Config); without it
// the function's client is awsenv's, which trusts the system's roots.
package awstls

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"embed"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"

	"github.com/example/appsync-dynamo/lambda/awsenv"
)

// amazonRoots holds the five roots Amazon Trust Services publishes for
// custom trust stores (Amazon Root CA 1-4 and Starfield Services Root
// Certificate Authority - G2, the certificates Debian's ca-certificates
// ships; the test checks their keys against the hashes the repository
// publishes): every AWS endpoint's certificate chains to one of them.
//
//go:embed roots/*.pem
var amazonRoots embed.FS

// AmazonRootsPEM returns the five roots, PEM-encoded.
func AmazonRootsPEM() []byte {
	var out []byte
	files, _ := amazonRoots.ReadDir("roots")
	for _, f := range files {
		b, _ := amazonRoots.ReadFile("roots/" + f.Name())
		out = append(out, b...)
	}
	return out
}

// Install is an awsenv.Config option: the configuration's HTTP client
// becomes HTTPClient's, and its connection to service's endpoint (the DNS
// label "dynamodb", or awsenv.Endpoint's where the environment sets one)
// starts opening at once (preconnect).
func Install(service string) awsenv.Option {
	return func(cfg *aws.Config, getenv func(string) string) error {
		client, err := HTTPClient(getenv)
		if err != nil {
			return err
		}
		cfg.HTTPClient = client
		preconnect(*cfg, service, awsenv.Endpoint(getenv, strings.ToUpper(service)))
		return nil
	}
}

// HTTPClient returns the client of the function's requests to AWS (DynamoDB
// and Secrets Manager): awsenv's client (its bound on connections, its plain
// request bodies), whose TLS connections
// trust Amazon's five roots first and the system's roots only when a
// server's chain does not verify against those (TLSDialer). The system's
// bundle (about 140 certificates) takes 11-13 ms to parse here, and most of
// a megabyte, on the first handshake of every new environment; five take a
// fraction of a millisecond. What a connection trusts is the union of both:
// no root is pinned.
//
// AWS_CA_BUNDLE (the SDK's variable), when getenv sets it, names a PEM file
// whose certificates are tried in place of Amazon's (a local TLS stand-in);
// a file that cannot be read or holds no certificate is an error.
func HTTPClient(getenv func(string) string) (*Client, error) {
	roots := AmazonRootsPEM()
	if path := getenv("AWS_CA_BUNDLE"); path != "" {
		var err error
		if roots, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("AWS_CA_BUNDLE: %w", err)
		}
		if block, _ := pem.Decode(roots); block == nil || block.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("AWS_CA_BUNDLE: %s holds no PEM certificate", path)
		}
	}
	// Both pools are parsed on first use (a TLS handshake), not at start.
	first := sync.OnceValues(func() (*x509.CertPool, error) {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(roots) {
			return nil, errors.New("AWS_CA_BUNDLE: no certificate parses")
		}
		return pool, nil
	})
	c := &Client{dial: TLSDialer(first, sync.OnceValues(x509.SystemCertPool))}
	c.BuildableClient = awshttp.NewBuildableClient().WithTransportOptions(awsenv.BoundConnections, func(tr *http.Transport) {
		tr.DialTLSContext = c.dialTLS
	})
	return c, nil
}

// Do sends req with its body plain (awsenv.PlainBodies).
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	return awsenv.PlainBodies{Client: c.BuildableClient}.Do(req)
}

// Client is the HTTP client HTTPClient returns.
type Client struct {
	*awshttp.BuildableClient
	dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu      sync.Mutex
	pending map[string]chan preconnected // by address, until a dial takes it
}

type preconnected struct {
	conn net.Conn
	err  error
	at   time.Time
}

// dialTimeout bounds a connection's TCP and TLS handshakes (the SDK's
// default dial timeout; a request's own deadline is shorter).
const dialTimeout = 30 * time.Second

// maxPreconnectedAge is how long a connection opened ahead may wait for its
// first request: an older one may have been closed by the server as idle,
// and is replaced by a new one.
const maxPreconnectedAge = 20 * time.Second

// preconnect starts opening, in the background, the TLS connection that
// cfg's client (HTTPClient's; any other is left alone) will hand to its
// first request to endpoint's host ("" for the region's endpoint of
// service, the DNS label "dynamodb" or "secretsmanager"): that request then
// waits only for what is left of the handshake. Plain HTTP endpoints
// (DynamoDB Local) are not opened ahead.
func preconnect(cfg aws.Config, service, endpoint string) {
	c, ok := cfg.HTTPClient.(*Client)
	if !ok {
		return
	}
	addr := service + "." + cfg.Region + ".amazonaws.com:443"
	if endpoint != "" {
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme != "https" {
			return
		}
		addr = u.Host
		if u.Port() == "" {
			addr += ":443"
		}
	}
	done := make(chan preconnected, 1)
	c.mu.Lock()
	if c.pending == nil {
		c.pending = map[string]chan preconnected{}
	}
	c.pending[addr] = done
	c.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), dialTimeout)
		defer cancel()
		conn, err := c.dial(ctx, "tcp", addr)
		done <- preconnected{conn, err, time.Now()}
	}()
}

// dialTLS is the transport's DialTLSContext: the connection opened ahead for
// addr, once, when it opened and is young enough, else a new one.
func (c *Client) dialTLS(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	done, ok := c.pending[addr]
	delete(c.pending, addr)
	c.mu.Unlock()
	if ok {
		select {
		case p := <-done:
			if p.err == nil && time.Since(p.at) < maxPreconnectedAge {
				return p.conn, nil
			}
			if p.conn != nil {
				p.conn.Close()
			}
		case <-ctx.Done():
			go func() { // close it once it opens: it is no one's now
				if p := <-done; p.conn != nil {
					p.conn.Close()
				}
			}()
			return nil, ctx.Err()
		}
	}
	return c.dial(ctx, network, addr)
}

// TLSDialer returns an http.Transport.DialTLSContext that opens a TLS 1.2+
// connection (HTTP/1.1, as the SDK speaks to AWS) verified by crypto/tls
// against first's pool and, when the server's chain does not reach one of
// its roots, with a second handshake against system's. The host name is
// verified as crypto/tls always does; only which roots are trusted changes.
// Each pool function is called when a handshake needs it (system's only
// after first's failed).
func TLSDialer(first, system func() (*x509.CertPool, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	dial := func(ctx context.Context, network, addr string, roots *x509.CertPool) (net.Conn, error) {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		d := tls.Dialer{
			NetDialer: &net.Dialer{Timeout: dialTimeout, KeepAlive: 30 * time.Second}, // the SDK's defaults
			Config:    &tls.Config{MinVersion: tls.VersionTLS12, ServerName: host, RootCAs: roots, NextProtos: []string{"http/1.1"}},
		}
		return d.DialContext(ctx, network, addr)
	}
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		pool, err := first()
		if err != nil {
			return nil, err
		}
		conn, err := dial(ctx, network, addr, pool)
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) {
			return conn, err
		}
		pool, poolErr := system()
		if poolErr != nil {
			return nil, errors.Join(err, poolErr)
		}
		return dial(ctx, network, addr, pool)
	}
}
