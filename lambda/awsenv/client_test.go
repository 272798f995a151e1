package awsenv_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/example/appsync-dynamo/lambda/awsenv"
)

// The race PlainBodies closes, made to happen every time: the client's
// writing goroutine is held after the request's last byte until the
// response's headers are back and the SDK has closed the request's body;
// the server sends the rest of the response only once the connection has
// been closed or a second has passed. The SDK's own client fails the read;
// PlainBodies and HTTPClient's read the whole response (awstls's client
// sends through PlainBodies too).
func TestTheSDKClosingARequestBodyEarlyDoesNotCloseTheConnection(t *testing.T) {
	clients := map[string]func(*racer) aws.HTTPClient{
		"the SDK's client": func(r *racer) aws.HTTPClient {
			return awshttp.NewBuildableClient().WithTransportOptions(r.dialer)
		},
		"PlainBodies": func(r *racer) aws.HTTPClient {
			return awsenv.PlainBodies{Client: awshttp.NewBuildableClient().WithTransportOptions(r.dialer)}
		},
		"HTTPClient's": func(r *racer) aws.HTTPClient {
			c := awsenv.HTTPClient().(awsenv.PlainBodies)
			c.Client = c.Client.(*awshttp.BuildableClient).WithTransportOptions(r.dialer)
			return c
		},
	}
	for name, client := range clients {
		t.Run(name, func(t *testing.T) {
			r := newRacer()
			srv := httptest.NewServer(r)
			defer srv.Close()
			ddb := dynamodb.NewFromConfig(aws.Config{
				Region:      "us-east-1",
				Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""),
				HTTPClient:  client(r),
			}, func(o *dynamodb.Options) {
				o.BaseEndpoint = aws.String(srv.URL)
				o.DisableValidateResponseChecksum = true
				o.RetryMaxAttempts = 1 // the race, not a retry's luck
				o.APIOptions = append(o.APIOptions, r.afterSend)
			})
			out, err := ddb.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String("t"), KeyConditionExpression: aws.String("pk = :p")})
			r.mu.Lock()
			held := r.heldOn
			r.mu.Unlock()
			if held == nil {
				t.Fatal("the request's last byte was never written: nothing was raced")
			}
			if name == "the SDK's client" {
				if err == nil || !strings.Contains(err.Error(), "use of closed network connection") {
					t.Errorf("got %v, want the SDK's own client to fail the read (if the SDK has fixed it, PlainBodies can go)", err)
				}
				return
			}
			if err != nil || out.Count != 1 {
				t.Fatalf("got %+v, %v; want the one item", out, err)
			}
		})
	}
}

// racer is the server, the client's connections and an SDK middleware,
// ordered as above.
type racer struct {
	mu       sync.Mutex
	heldOn   *racerConn    // the connection whose write was held
	release  chan struct{} // closed when the SDK has the response: the write returns
	closed   chan struct{} // closed when the client closes the held write's connection
	closeOne sync.Once
	rest     chan struct{} // closed when the server may send the rest
}

func newRacer() *racer {
	return &racer{release: make(chan struct{}), closed: make(chan struct{}), rest: make(chan struct{})}
}

// ServeHTTP answers a Query with one item, in two parts: the second once
// r.rest is closed.
func (r *racer) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	io.Copy(io.Discard, req.Body) // as DynamoDB, which answers a whole request
	w.Header().Set("Content-Type", "application/x-amz-json-1.0")
	w.Write([]byte(`{"Count":1,"Items":[{"pk":{"S":"a`))
	w.(http.Flusher).Flush()
	<-r.rest
	w.Write([]byte(`b"}}],"ScannedCount":1}`))
}

// dialer wraps the transport's connections in racerConns.
func (r *racer) dialer(tr *http.Transport) {
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return &racerConn{Conn: c, r: r}, nil
	}
}

// afterSend is an API option: once the SDK's HTTP handler has returned (the
// response's headers received, the request's body closed), it lets the held
// write return, then waits for the connection to close, or a second, before
// the server sends the rest.
func (r *racer) afterSend(stack *middleware.Stack) error {
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("racer", func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleDeserialize(ctx, in)
		close(r.release)
		select {
		case <-r.closed:
		case <-time.After(time.Second):
		}
		close(r.rest)
		return out, md, err
	}), middleware.After)
}

type racerConn struct {
	net.Conn
	r *racer
}

// Write holds the write that ends the request's JSON body until released.
func (c *racerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.r.mu.Lock()
	hold := c.r.heldOn == nil && bytes.HasSuffix(p, []byte("}"))
	if hold {
		c.r.heldOn = c
	}
	c.r.mu.Unlock()
	if hold {
		<-c.r.release
	}
	return n, err
}

// Close closes the connection, then says so.
func (c *racerConn) Close() error {
	err := c.Conn.Close()
	c.r.mu.Lock()
	held := c.r.heldOn == c
	c.r.mu.Unlock()
	if held {
		c.r.closeOne.Do(func() { close(c.r.closed) })
	}
	return err
}
