package devserver_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// chromium returns the headless browser (.ci/run installs it; the README
// says how), failing the test when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	t.Fatal("no chromium on PATH: apt-get install chromium (.ci/run does it when missing)")
	return ""
}

// The query page in a real browser: headless Chromium loads it, runs the
// seed's query, and GraphiQL renders the result, with extensions.cost beside
// it; every request stays on 127.0.0.1 (anything else is unresolvable). A
// screenshot goes to .build/console.png.
func TestConsoleInChromium(t *testing.T) {
	browser := chromium(t)
	modules, err := filepath.Abs("../console/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "graphiql", "graphiql.min.js")); err != nil {
		t.Fatalf("GraphiQL is not installed (make test installs it and links local/console/node_modules): %v", err)
	}
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
		Table: fmt.Sprintf("console-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Blog(2, 3, 3), Console: modules})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()

	// The page and its files are served from here.
	for _, path := range []string{"/", "/ide/graphiql.min.js", "/ide/graphiql.min.css", "/ide/react.production.min.js", "/ide/react-dom.production.min.js"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %v %v", path, resp.Status, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if path == "/" && (!strings.Contains(string(body), "/ide/graphiql.min.js") || strings.Contains(string(body), "https://")) {
			t.Errorf("the page loads from elsewhere:\n%s", body)
		}
	}

	query := `{ user(handle: "alice") { name posts { items { title comments { items { body author { name } } } } } } }`
	page := srv.URL + "/?run=1&query=" + url.QueryEscape(query)
	screenshot, _ := filepath.Abs("../../.build/console.png")
	os.MkdirAll(filepath.Dir(screenshot), 0o755)
	flags := []string{"--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir=" + t.TempDir(), "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
		"--virtual-time-budget=15000", "--window-size=1400,900"}
	dom, err := exec.CommandContext(t.Context(), browser, append(flags, "--dump-dom", page)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	html := string(dom)
	for _, want := range []string{"graphiql-container", "Alice", "Post 2", "extensions.cost", "lambdaInvocations", "dynamodbRoundTrips"} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered page has no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("rendered page:\n%.3000s", html)
	}
	if out, err := exec.CommandContext(t.Context(), browser, append(flags, "--screenshot="+screenshot, page)...).CombinedOutput(); err != nil {
		t.Errorf("screenshot: %v\n%s", err, out)
	} else if info, err := os.Stat(screenshot); err != nil || info.Size() < 10000 {
		t.Errorf("screenshot %s: %v", screenshot, err)
	} else {
		t.Logf("screenshot: %s (%d bytes)", screenshot, info.Size())
	}
}
