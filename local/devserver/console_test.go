package devserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// chromium returns the headless browser make installs (HEADLESS_CHROMIUM),
// failing the test when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the headless Chromium, which make test installs: skipped under -short (make check)")
	}
	path := os.Getenv("HEADLESS_CHROMIUM")
	if path == "" {
		t.Fatal("HEADLESS_CHROMIUM is not set: run through make test, which installs the headless Chromium into the cache")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("headless Chromium: %v (make browser installs it)", err)
	}
	return path
}

// browse opens a headless Chromium (chrome-headless-shell, one process,
// SwiftShader for graphics) that resolves no host but 127.0.0.1, and returns
// a context to drive it with chromedp.
func browse(t *testing.T) context.Context {
	t.Helper()
	alloc, cancel := chromedp.NewExecAllocator(t.Context(),
		chromedp.ExecPath(chromium(t)), chromedp.Headless, chromedp.NoSandbox, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 900),
		chromedp.Flag("single-process", true), chromedp.Flag("no-zygote", true), chromedp.Flag("in-process-gpu", true),
		chromedp.Flag("use-gl", "angle"), chromedp.Flag("use-angle", "swiftshader"), chromedp.Flag("enable-unsafe-swiftshader", true),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"))
	t.Cleanup(cancel)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(cancel)
	ctx, cancel = context.WithTimeout(ctx, time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// The query page in a real browser: headless Chromium loads it, runs the
// seed's query, and GraphiQL renders the result, with extensions.cost beside
// it; every request stays on 127.0.0.1 (anything else is unresolvable). A
// screenshot goes to .build/console.png.
func TestConsoleInChromium(t *testing.T) {
	modules, err := filepath.Abs("../console/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "graphiql", "graphiql.min.js")); err != nil {
		t.Fatalf("GraphiQL is not installed (make test installs it and links local/console/node_modules): %v", err)
	}
	data := sample.Blog(2, 3, 3)
	sample.FollowWithFeed(&data, sample.Carol, sample.Alice, 4102444800)
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
		Table: fmt.Sprintf("console-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: data, Console: modules})
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
	ctx := browse(t)
	steps := []chromedp.Action[chromedp.Void]{chromedp.Navigate(page), chromedp.WaitVisible(".graphiql-container")}
	for _, step := range steps {
		if _, err := chromedp.Run(ctx, step); err != nil {
			t.Fatalf("chromium: %v", err)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes("dynamodbRoundTrips") && document.body.innerText.includes("Post 2")`)); err != nil {
		t.Errorf("the result never showed: %v", err)
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	for _, want := range []string{"graphiql-container", "Alice", "Post 2", "extensions.cost", "lambdaInvocations", "dynamodbRoundTrips"} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered page has no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("rendered page:\n%.3000s", html)
	}
	if len(png) < 10000 {
		t.Errorf("screenshot of %d bytes", len(png))
	} else if err := os.WriteFile(screenshot, png, 0o644); err != nil {
		t.Error(err)
	} else {
		t.Logf("screenshot: %s (%d bytes)", screenshot, len(png))
	}
	// The waterfall of the seed's query: its one invocation, each of its
	// requests a row under it, the four of the critical path in red, and
	// the early returns counted.
	checkWaterfall(t, ctx, 1, 4, "Comment.author")

	// A feed page, as carol: the feed's invocation, its round trips, the
	// authors answered early.
	feed := srv.URL + "/?run=1&caller=carol&query=" + url.QueryEscape(`{ feed(limit: 5) { items { title author { name } } } }`)
	if _, err := chromedp.Run(ctx, chromedp.Navigate(feed)); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	checkWaterfall(t, ctx, 1, 3, "Post.author") // the feed's two round trips, then the authors
	if png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot()); err == nil && len(png) > 10000 {
		os.WriteFile(filepath.Join(filepath.Dir(screenshot), "console-feed.png"), png, 0o644)
	}
}

// checkWaterfall waits for the console's waterfall and checks its rows:
// invocations, one row per DynamoDB request of the plan, critical of them
// in red, and the early returns of field counted.
func checkWaterfall(t *testing.T, ctx context.Context, invocations, critical int, field string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!window.lastPlan && document.querySelectorAll('#plan g.row').length > 0`)); err != nil {
		t.Fatalf("no waterfall drawn: %v", err)
	}
	var got struct {
		Invocations, Requests, Critical, Planned int
		Early                                    string
	}
	js := `({invocations: document.querySelectorAll('#plan g.row.invocation').length,
		requests: document.querySelectorAll('#plan g.row.request, #plan g.row.critical').length,
		critical: document.querySelectorAll('#plan g.row.critical').length,
		planned: window.lastPlan.requests.length,
		early: document.querySelector('#plan .early').textContent})`
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Invocations != invocations || got.Requests != got.Planned || got.Planned == 0 || got.Critical != critical || !strings.Contains(got.Early, field) {
		t.Errorf("waterfall: %+v; want %d invocations, a row per request, %d critical, early returns of %s", got, invocations, critical, field)
	}
}
