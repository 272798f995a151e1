package awsenv

import (
	"io"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// HTTPClient returns the client of the function's requests to AWS (DynamoDB
// and Secrets Manager): the SDK's, with its connections bounded
// (BoundConnections) and its request bodies plain (PlainBodies). Its TLS
// connections trust the system's roots (SSL_CERT_FILE names others).
func HTTPClient() aws.HTTPClient {
	return PlainBodies{Client: awshttp.NewBuildableClient().WithTransportOptions(BoundConnections)}
}

// MaxConnsPerHost bounds the connections an environment holds to one
// endpoint: past it a request waits for a connection, so that one
// invocation's concurrent requests cannot open thousands (docs/limits.md).
const MaxConnsPerHost = 64

// BoundConnections sets a transport's bounds: at most MaxConnsPerHost
// connections to a host, all of them kept open when idle.
func BoundConnections(tr *http.Transport) {
	tr.MaxConnsPerHost, tr.MaxIdleConnsPerHost = MaxConnsPerHost, MaxConnsPerHost
	tr.MaxIdleConns = max(tr.MaxIdleConns, MaxConnsPerHost)
}

// A request's body as net/http should see it. The SDK (smithy-go) wraps a
// request's body so that, once closed, its WriteTo returns io.EOF, and closes
// it as soon as the response's headers arrive. net/http's writing goroutine,
// after copying the body's ContentLength bytes, copies what may remain with
// io.Copy, which calls WriteTo; when that goroutine gets there after the
// close (the server had the whole body and answered first, as on a loaded
// machine), it takes the io.EOF for a failed write and closes the
// connection under the response being read: the SDK reports "deserialization
// failed ... use of closed network connection" on a 200, and when each retry
// races the same way, the read fails (aws/aws-sdk-go-v2#2737 traces it to
// the same close). Without WriteTo, io.Copy reads, and a closed body's Read
// returns io.EOF, which io.Copy takes for the end of the body.

// PlainBodies is an HTTP client that sends each request through Client with
// the request's body hidden behind a plain io.ReadCloser (no WriteTo), so
// that the SDK's closing it early cannot close the connection (awstls's
// client does the same).
type PlainBodies struct{ Client aws.HTTPClient }

// Do sends req through p.Client with its body plain.
func (p PlainBodies) Do(req *http.Request) (*http.Response, error) {
	return p.Client.Do(plainBody(req))
}

// plainBody returns req with its body, when it has one, behind a type that
// has only Read and Close. req is changed in place: the SDK builds a new
// *http.Request for every attempt.
func plainBody(req *http.Request) *http.Request {
	if req.Body != nil && req.Body != http.NoBody {
		req.Body = readCloser{req.Body}
	}
	return req
}

// readCloser hides every method of its ReadCloser but Read and Close.
type readCloser struct{ rc io.ReadCloser }

func (r readCloser) Read(p []byte) (int, error) { return r.rc.Read(p) }
func (r readCloser) Close() error               { return r.rc.Close() }
