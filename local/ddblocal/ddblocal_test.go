package ddblocal_test

import (
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/storetest"
)

// DynamoDB Local has no host option; the launcher must bind it to loopback.
func TestListensOnLoopbackOnly(t *testing.T) {
	u, err := url.Parse(storetest.Endpoint(t))
	if err != nil {
		t.Fatal(err)
	}
	if u.Hostname() != "127.0.0.1" {
		t.Fatalf("endpoint %s is not on 127.0.0.1", u)
	}
	conn, err := net.DialTimeout("tcp", u.Host, time.Second)
	if err != nil {
		t.Fatalf("loopback dial: %v", err)
	}
	conn.Close()

	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	tried := 0
	for _, a := range addrs {
		ipnet, ok := a.(*net.IPNet)
		if !ok || ipnet.IP.IsLoopback() || ipnet.IP.IsLinkLocalUnicast() {
			continue
		}
		tried++
		target := net.JoinHostPort(ipnet.IP.String(), u.Port())
		if conn, err := net.DialTimeout("tcp", target, time.Second); err == nil {
			conn.Close()
			t.Errorf("DynamoDB Local answers on %s: it must listen on 127.0.0.1 only", target)
		}
	}
	t.Logf("checked %d non-loopback addresses", tried)
}
