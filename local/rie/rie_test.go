package rie_test

import (
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/rie"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// build returns the emulator and the real bootstrap, built for this machine.
func build(t *testing.T) (binary, bootstrap string) {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the Runtime Interface Emulator, which make test installs: skipped under -short (make check)")
	}
	binary, err := rie.Binary()
	if err != nil {
		t.Fatal(err)
	}
	bootstrap = filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-o", bootstrap, "../../lambda/cmd/resolver")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build bootstrap: %v\n%s", err, out)
	}
	return binary, bootstrap
}

// TestBootstrapUnderEmulator runs make invoke's path: the real bootstrap,
// built for this machine, under the Runtime Interface Emulator, against a
// DynamoDB Local table with the sample data.
func TestBootstrapUnderEmulator(t *testing.T) {
	binary, bootstrap := build(t)
	s, _ := storetest.NewStore(t, sample.Data())
	emu, err := rie.Start(t.Context(), binary, bootstrap, []string{
		"TABLE_NAME=" + s.Table(),
		"AWS_ENDPOINT_URL_DYNAMODB=" + storetest.Endpoint(t),
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
		"NEXT_TOKEN_KEY=" + string(storetest.TokenKey),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()

	event, err := os.ReadFile("../../events/Post.author.json")
	if err != nil {
		t.Fatal(err)
	}
	out, err := emu.Invoke(t.Context(), event)
	if err != nil {
		t.Fatalf("%v\n%s", err, emu.Output())
	}
	var items []struct {
		Data      *struct{ Handle string }
		ErrorType string
	}
	if err := json.Unmarshal(out, &items); err != nil || len(items) != 3 {
		t.Fatalf("reply %s (%v)\n%s", out, err, emu.Output())
	}
	if items[0].Data.Handle != "alice" || items[1].Data.Handle != "bob" || items[2].ErrorType != "NotFound" {
		t.Errorf("reply %s", out)
	}

	// A handler error: the emulator returns it as AppSync would show it.
	out, err = emu.Invoke(t.Context(), []byte(`{"info":{"parentTypeName":"Query","fieldName":"me"},"identity":null}`))
	var failure struct{ ErrorType, ErrorMessage string }
	if err != nil || json.Unmarshal(out, &failure) != nil || failure.ErrorType != "Unauthorized" {
		t.Errorf("error reply %s (%v)", out, err)
	}

	// What make invoke reports: the runtime's start, each invocation, the
	// function's peak memory.
	r, err := emu.Report()
	if err != nil || r.InitMs <= 0 || len(r.InvokeMs) != 2 || r.PeakRSSKiB < 1024 {
		t.Errorf("report %+v, %v", r, err)
	}
	t.Logf("init %.1f ms, invocations %v ms, peak RSS %d KiB", r.InitMs, r.InvokeMs, r.PeakRSSKiB)
}

// TestBootstrapRefusesToStartWithoutAKeyInLambda starts the function as Lambda
// does (the runtime API is set) without NEXT_TOKEN_KEY: it must not serve
// tokens signed with the public development key.
func TestBootstrapRefusesToStartWithoutAKeyInLambda(t *testing.T) {
	binary, bootstrap := build(t)
	env := []string{"TABLE_NAME=t", "AWS_ENDPOINT_URL_DYNAMODB=http://127.0.0.1:9", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}
	for _, key := range []string{"", "NEXT_TOKEN_KEY=development-only-next-token-key"} {
		emu, err := rie.Start(t.Context(), binary, bootstrap, append(env, key))
		if err != nil {
			t.Fatal(err)
		}
		out, err := emu.Invoke(t.Context(), []byte(`{"info":{"parentTypeName":"Query","fieldName":"nope"}}`))
		emu.Stop()
		if err == nil && !strings.Contains(string(out), "errorType") || strings.Contains(string(out), "ValidationError") {
			t.Errorf("%q: the function served: %s", key, out)
		}
		if !strings.Contains(emu.Output(), "refusing to start") {
			t.Errorf("%q: no start-up error in the log:\n%s", key, emu.Output())
		}
	}
	emu, err := rie.Start(t.Context(), binary, bootstrap, append(env, "NEXT_TOKEN_KEY=a-secret"))
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	out, err := emu.Invoke(t.Context(), []byte(`{"info":{"parentTypeName":"Query","fieldName":"nope"}}`))
	if err != nil || !strings.Contains(string(out), `"errorType":"ValidationError"`) {
		t.Errorf("with a key: %s (%v)\n%s", out, err, emu.Output())
	}
}

// TestBootstrapAnswersBeforeItsTimeoutWhenDynamoDBHangs runs the real
// bootstrap under the emulator with a 3 s timeout against an endpoint that
// accepts connections and never answers: the reply must be an error AppSync
// can show, in time, not "Task timed out".
func TestBootstrapAnswersBeforeItsTimeoutWhenDynamoDBHangs(t *testing.T) {
	binary, bootstrap := build(t)
	emu, err := rie.Start(t.Context(), binary, bootstrap, []string{
		"TABLE_NAME=t", "AWS_ENDPOINT_URL_DYNAMODB=" + ddblocal.BlackHole(t), "AWS_LAMBDA_FUNCTION_TIMEOUT=3",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "NEXT_TOKEN_KEY=k",
	})
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()
	event, err := os.ReadFile("../../events/Query.post.json")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	out, err := emu.Invoke(t.Context(), event)
	took := time.Since(start)
	var failure struct{ ErrorType, ErrorMessage string }
	if err != nil || json.Unmarshal(out, &failure) != nil || (failure.ErrorType != "Throttled" && failure.ErrorType != "InternalError") || took >= 3*time.Second {
		t.Fatalf("after %v: %s (%v)\n%s", took, out, err, emu.Output())
	}
	// The function logs the cause before it replies, but the emulator copies
	// its output apart from the reply: under load the line can reach the
	// test after the reply does (CI's run at 01:57, 2026-12-05).
	logged := func() bool { return strings.Contains(emu.Output(), "deadline exceeded") }
	for wait := time.Now(); !logged() && time.Since(wait) < 5*time.Second; {
		time.Sleep(20 * time.Millisecond)
	}
	if !logged() {
		t.Errorf("the log does not give the cause:\n%s", emu.Output())
	}
	t.Logf("%s after %v", failure.ErrorType, took)
}

// TestBootstrapReadsItsKeyFromTheSecret starts the function as the stack
// configures it, with the ARN of the token key's secret, against a Secrets
// Manager stand-in: the tokens it issues are signed with the secret's value,
// the read does not hold up init, and without a readable secret the requests
// that need the key fail, saying why.
func TestBootstrapReadsItsKeyFromTheSecret(t *testing.T) {
	binary, bootstrap := build(t)
	const arn = "arn:aws:secretsmanager:us-east-1:123456789012:secret:NextTokenKey-abc"
	var asked []string
	var mu sync.Mutex
	var slow atomic.Int64 // how long the stand-in takes to answer
	secrets := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Duration(slow.Load()))
		if !strings.HasPrefix(r.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=local/") {
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `{"__type":"UnrecognizedClientException","message":"not signed"}`)
			return
		}
		var in struct{ SecretId string }
		json.NewDecoder(r.Body).Decode(&in)
		mu.Lock()
		asked = append(asked, r.Header.Get("X-Amz-Target")+" "+in.SecretId)
		mu.Unlock()
		if in.SecretId != arn {
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"ResourceNotFoundException","message":"no such secret"}`)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		fmt.Fprintf(w, `{"ARN":%q,"Name":"NextTokenKey","SecretString":"from-the-secret"}`, arn)
	}))
	defer secrets.Close()
	s, _ := storetest.NewStore(t, sample.Data())
	env := []string{"TABLE_NAME=" + s.Table(), "AWS_ENDPOINT_URL_DYNAMODB=" + storetest.Endpoint(t),
		"AWS_ENDPOINT_URL_SECRETS_MANAGER=" + secrets.URL, "AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local"}
	event := []byte(`{"arguments":{"limit":1},"source":{"id":"` + sample.HelloPost + `"},
	  "info":{"parentTypeName":"Post","fieldName":"comments","selectionSetGraphQL":"{ items { id } nextToken }"}}`)

	emu, err := rie.Start(t.Context(), binary, bootstrap, append(env, "NEXT_TOKEN_SECRET_ARN="+arn))
	if err != nil {
		t.Fatal(err)
	}
	out, err := emu.Invoke(t.Context(), event)
	emu.Stop()
	var page struct{ NextToken string }
	if err != nil || json.Unmarshal(out, &page) != nil || page.NextToken == "" {
		t.Fatalf("reply %s (%v)\n%s", out, err, emu.Output())
	}
	scope := cursor.Scope{Query: "Post.comments", Parent: sample.HelloPost}
	if _, err := cursor.New([]byte("from-the-secret")).Decode(scope, page.NextToken); err != nil {
		t.Errorf("the token is not signed with the secret's value: %v", err)
	}
	mu.Lock()
	if len(asked) != 1 || asked[0] != "secretsmanager.GetSecretValue "+arn {
		t.Errorf("Secrets Manager was asked %v; want one GetSecretValue of the secret", asked)
	}
	mu.Unlock()

	// The read runs beside init: init does not wait for a slow Secrets
	// Manager, the first request that signs a token does.
	slow.Store(int64(300 * time.Millisecond))
	emu, err = rie.Start(t.Context(), binary, bootstrap, append(env, "NEXT_TOKEN_SECRET_ARN="+arn))
	if err != nil {
		t.Fatal(err)
	}
	out, err = emu.Invoke(t.Context(), event)
	report, rerr := emu.Report()
	emu.Stop()
	if err != nil || json.Unmarshal(out, &page) != nil || page.NextToken == "" || rerr != nil || report.InitMs >= 300 {
		t.Errorf("with a secret read of 300 ms: reply %s (%v), init %v ms (%v)\n%s", out, err, report.InitMs, rerr, emu.Output())
	}
	slow.Store(0)

	// An unreadable secret fails the requests that need the key, clearly,
	// and is read again by each: never a token signed without it.
	mu.Lock()
	asked = nil
	mu.Unlock()
	emu, err = rie.Start(t.Context(), binary, bootstrap, append(env, "NEXT_TOKEN_SECRET_ARN="+arn+"-gone"))
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		out, _ = emu.Invoke(t.Context(), event)
		var failure struct{ ErrorType string }
		if json.Unmarshal(out, &failure); failure.ErrorType != "InternalError" {
			t.Errorf("with an unreadable secret: %s, want InternalError", out)
		}
	}
	emu.Stop()
	mu.Lock()
	if len(asked) != 2 || !strings.Contains(emu.Output(), "cannot read the token key") {
		t.Errorf("with an unreadable secret: Secrets Manager asked %v (want twice); log:\n%s", asked, emu.Output())
	}
	mu.Unlock()
}

func TestSummarize(t *testing.T) {
	type Report = rie.Report
	runs := []Report{
		{InitMs: 5, InvokeMs: []float64{12, 6}, PeakRSSKiB: 10000},
		{InitMs: 4, InvokeMs: []float64{6, 6}, PeakRSSKiB: 10400},
		{InitMs: 7, InvokeMs: []float64{9, 3}, PeakRSSKiB: 10200},
		{InitMs: 6, InvokeMs: []float64{10, 5}, PeakRSSKiB: 10600},
	}
	got := rie.Summarize(runs)
	want := "4 runs: init 5.5 ms (4.0-7.0), first invocation 9.5 ms (6.0-12.0), second 5.5 ms (3.0-6.0), first/second 2.00 x (1.00-3.00), init+first 16.0 ms (10.0-17.0), peak RSS 10300 KiB (10000-10600)"
	if got != want {
		t.Errorf("Summarize:\n got %s\nwant %s", got, want)
	}
}

// TestBootstrapOverTLS reaches DynamoDB Local through a TLS proxy, as the
// function reaches DynamoDB in Lambda: it trusts the certificates of
// AWS_CA_BUNDLE (Amazon's roots, in Lambda) first and the system's
// (SSL_CERT_FILE) after them, and reaches no server that neither holds.
func TestBootstrapOverTLS(t *testing.T) {
	binary, bootstrap := build(t)
	s, _ := storetest.NewStore(t, sample.Data())
	backend, _ := url.Parse(storetest.Endpoint(t))
	proxy := httptest.NewTLSServer(httputil.NewSingleHostReverseProxy(backend))
	defer proxy.Close()
	proxy.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	proxyCert := write("proxy.pem", pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: proxy.Certificate().Raw}))
	roots, err := rie.AmazonRoots("../..")
	if err != nil {
		t.Fatal(err)
	}
	amazon := write("amazon.pem", roots)
	event, err := os.ReadFile("../../events/Post.author.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, bundle, system string
		reached              bool
	}{
		{"the proxy's certificate in AWS_CA_BUNDLE", proxyCert, amazon, true},
		{"in the system's roots only", amazon, proxyCert, true},
		{"in neither", amazon, amazon, false},
	} {
		emu, err := rie.Start(t.Context(), binary, bootstrap, []string{
			"TABLE_NAME=" + s.Table(), "AWS_ENDPOINT_URL_DYNAMODB=" + proxy.URL,
			"AWS_CA_BUNDLE=" + c.bundle, "SSL_CERT_FILE=" + c.system, "SSL_CERT_DIR=" + t.TempDir(), // no other roots
			"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
			"NEXT_TOKEN_KEY=" + string(storetest.TokenKey),
		})
		if err != nil {
			t.Fatal(err)
		}
		out, err := emu.Invoke(t.Context(), event)
		emu.Stop()
		var items []struct{ Data *struct{ Handle string } }
		reached := err == nil && json.Unmarshal(out, &items) == nil && len(items) == 3 && items[0].Data != nil && items[0].Data.Handle == "alice"
		if reached != c.reached {
			t.Errorf("%s: reached DynamoDB %v, want %v: reply %s (%v)\n%s", c.name, reached, c.reached, out, err, emu.Output())
		}
	}
}
