package awstls_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/internal/awstls"
	"github.com/example/appsync-dynamo/local/ddblocal"
)

// env reads vars, as os.Getenv reads the environment.
func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// The five roots are the ones Amazon Trust Services lists for custom trust
// stores: their keys' SHA-256 hashes as its repository publishes them.
func TestTheAmazonRootsAreAmazonTrustServicesFive(t *testing.T) {
	want := []string{
		"fbe3018031f9586bcbf41727e417b7d1c45c2f47f93be372a17b96b50757d5a2", // Amazon Root CA 1
		"7f4296fc5b6a4e3b35d3c369623e364ab1af381d8fa7121533c9d6c633ea2461", // Amazon Root CA 2
		"36abc32656acfc645c61b71613c4bf21c787f5cabbee48348d58597803d7abc9", // Amazon Root CA 3
		"f7ecded5c66047d28ed6466b543c40e0743abe81d109254dcf845d4c2c7853c5", // Amazon Root CA 4
		"2b071c59a0a0ae76b0eadb2bad23bad4580b69c3601b630c2eaf0613afa83f92", // Starfield Services Root Certificate Authority - G2
	}
	var got []string
	rest := awstls.AmazonRootsPEM()
	for {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			break
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(c.RawSubjectPublicKeyInfo)
		got = append(got, hex.EncodeToString(sum[:]))
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("root key hashes\n got %v\nwant %v", got, want)
	}
}

// authority is a test CA that issues leaf certificates.
type authority struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newAuthority(t *testing.T, name string) authority {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return authority{cert, key}
}

func (a authority) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(a.cert)
	return p
}

// leaf issues a server certificate for dns, and for 127.0.0.1 when local.
func (a authority) leaf(t *testing.T, dns string, local bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: dns},
		DNSNames:  []string{dns},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if local {
		tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &key.PublicKey, a.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// server serves over TLS with cert until the test ends.
func server(t *testing.T, cert tls.Certificate) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// A server is reached when its chain verifies against the first pool (the
// system's then never read) or, failing that, against the system's; never
// when its certificate is not for the host dialed, whichever root it chains
// to (that failure is not the roots': the system's are not read for it).
func TestTheTLSDialerTriesAmazonsRootsThenTheSystems(t *testing.T) {
	amazon, system, other := newAuthority(t, "amazon"), newAuthority(t, "system"), newAuthority(t, "other")
	reads := 0
	dial := awstls.TLSDialer(func() (*x509.CertPool, error) { return amazon.pool(), nil },
		func() (*x509.CertPool, error) { reads++; return system.pool(), nil })
	cases := []struct {
		name      string
		cert      tls.Certificate
		ok        bool
		readsPool int
	}{
		{"chains to the first pool", amazon.leaf(t, "dynamodb.example", true), true, 0},
		{"chains to the system's", system.leaf(t, "dynamodb.example", true), true, 1},
		{"chains to neither", other.leaf(t, "dynamodb.example", true), false, 1},
		{"for another host, first pool", amazon.leaf(t, "dynamodb.example", false), false, 0},
		{"for another host, system's", system.leaf(t, "dynamodb.example", false), false, 0},
	}
	for _, c := range cases {
		reads = 0
		srv := server(t, c.cert)
		conn, err := dial(t.Context(), "tcp", srv.Listener.Addr().String())
		if err == nil {
			conn.Close()
		}
		if (err == nil) != c.ok || reads != c.readsPool {
			t.Errorf("%s: error %v, system pool read %d times (want ok %v, %d)", c.name, err, reads, c.ok, c.readsPool)
		}
	}
}

// Through the client, over a real handshake: a server whose certificate
// AWS_CA_BUNDLE holds is reached; one it does not hold, and the system does
// not trust, is refused.
func TestTheHTTPClientVerifiesAgainstTheBundle(t *testing.T) {
	ca := newAuthority(t, "bundle")
	srv := server(t, ca.leaf(t, "localhost", true))
	dir := t.TempDir()
	bundle := filepath.Join(dir, "bundle.pem")
	if err := os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	get := func(vars map[string]string) error {
		client, err := awstls.HTTPClient(env(vars))
		if err != nil {
			return err
		}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		return err
	}
	if err := get(map[string]string{"AWS_CA_BUNDLE": bundle}); err != nil {
		t.Errorf("a server the bundle trusts: %v", err)
	}
	if err := get(nil); err == nil {
		t.Error("a server neither Amazon's roots nor the system's trust was reached")
	}
	if _, err := awstls.HTTPClient(env(map[string]string{"AWS_CA_BUNDLE": filepath.Join(dir, "absent.pem")})); err == nil {
		t.Error("an unreadable AWS_CA_BUNDLE was accepted")
	}
	empty := filepath.Join(dir, "empty.pem")
	os.WriteFile(empty, []byte("not a certificate"), 0o600)
	if _, err := awstls.HTTPClient(env(map[string]string{"AWS_CA_BUNDLE": empty})); err == nil {
		t.Error("an AWS_CA_BUNDLE without a certificate was accepted")
	}
}

// Install's client opens the connection ahead (preconnect): the requests that follow, the
// first one even while the handshake is under way, reuse it, and the server
// sees one connection in all. A plain HTTP endpoint is not opened ahead.
func TestPreconnectHandsItsConnectionToTheFirstRequest(t *testing.T) {
	ca := newAuthority(t, "bundle")
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{ca.leaf(t, "localhost", true)}}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			mu.Lock()
			conns++
			mu.Unlock()
		}
	}
	srv.StartTLS()
	defer srv.Close()
	bundle := filepath.Join(t.TempDir(), "bundle.pem")
	os.WriteFile(bundle, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ca.cert.Raw}), 0o600)
	for _, wait := range []bool{false, true} {
		mu.Lock()
		conns = 0
		mu.Unlock()
		cfg, err := awsenv.Config(env(map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s",
			"AWS_CA_BUNDLE": bundle, "AWS_ENDPOINT_URL_DYNAMODB": srv.URL}), awstls.Install("dynamodb"))
		if err != nil {
			t.Fatal(err)
		}
		if wait {
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			if conns != 1 {
				t.Errorf("before any request, the server saw %d connections, want the one opened ahead", conns)
			}
			mu.Unlock()
		}
		for range 3 {
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
			resp, err := cfg.HTTPClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		mu.Lock()
		if conns != 1 {
			t.Errorf("preconnected (requests after it opened: %v): the server saw %d connections, want 1", wait, conns)
		}
		mu.Unlock()
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer plain.Close()
	cfg, _ := awsenv.Config(env(map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s",
		"AWS_ENDPOINT_URL_DYNAMODB": plain.URL}), awstls.Install("dynamodb"))
	if n := awstls.Pending(cfg); n != 0 {
		t.Errorf("a plain HTTP endpoint was opened ahead (%d pending)", n)
	}
}

// A server that takes the connection and never answers the handshake does
// not hold a request waiting for the connection opened ahead past the
// request's deadline (whether the hand-off's own wait gives up with it, or
// the transport stops waiting for the dial: either suffices, so this checks
// what a caller sees, not which).
func TestAHandshakeThatHangsEndsWithTheRequestsDeadline(t *testing.T) {
	url := "https://" + strings.TrimPrefix(ddblocal.BlackHole(t), "http://")
	cfg, err := awsenv.Config(env(map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "s",
		"AWS_ENDPOINT_URL_DYNAMODB": url}), awstls.Install("dynamodb"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	start := time.Now()
	resp, err := cfg.HTTPClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatal("a server that never handshakes answered")
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the request gave up after %v, want about its 200 ms deadline", took)
	}
}

// The client sends through awsenv.PlainBodies (the SDK's early close of a
// request's body cannot close its connection: awsenv's test makes that race
// happen) and within awsenv's bound on connections. A body's WriteTo, which
// net/http calls when a body has one, is never called through it; through
// the SDK's client it is.
func TestTheClientSendsPlainBodiesWithinTheBound(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.Copy(io.Discard, r.Body) }))
	defer srv.Close()
	client, err := awstls.HTTPClient(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if tr := client.GetTransport(); tr.MaxConnsPerHost != awsenv.MaxConnsPerHost || tr.MaxIdleConnsPerHost != awsenv.MaxConnsPerHost {
		t.Errorf("at most %d connections a host, %d idle: want awsenv's %d", tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost, awsenv.MaxConnsPerHost)
	}
	for _, c := range []struct {
		name   string
		client interface {
			Do(*http.Request) (*http.Response, error)
		}
		wantCall bool
	}{{"awstls's client", client, false}, {"the SDK's client", client.BuildableClient, true}} {
		body := &writerToBody{Reader: strings.NewReader("{}")}
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, io.NopCloser(body))
		req.Body = body
		resp, err := c.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if body.called != c.wantCall {
			t.Errorf("%s: the body's WriteTo called: %v, want %v", c.name, body.called, c.wantCall)
		}
	}
}

// writerToBody is a request body with a WriteTo, as the SDK's is.
type writerToBody struct {
	*strings.Reader
	called bool
}

func (b *writerToBody) WriteTo(w io.Writer) (int64, error) {
	b.called = true
	return b.Reader.WriteTo(w)
}

func (b *writerToBody) Close() error { return nil }
