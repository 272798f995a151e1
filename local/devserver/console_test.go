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
	"github.com/example/appsync-dynamo/local/feedtest"
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
	endpoint := storetest.Endpoint(t) // first: under -short (make check) it skips before asking for GraphiQL
	modules, err := filepath.Abs("../console/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(modules, "graphiql", "graphiql.min.js")); err != nil {
		t.Fatalf("GraphiQL is not installed (make test installs it and links local/console/node_modules): %v", err)
	}
	data := sample.Blog(2, 3, 3)
	feedtest.FollowWithFeed(&data, sample.Carol, sample.Alice, 4102444800)
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: endpoint,
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
	ctx := browse(t)
	run := func(step chromedp.Action[chromedp.Void]) {
		t.Helper()
		if _, err := chromedp.Run(ctx, step); err != nil {
			t.Fatalf("chromium: %v", err)
		}
	}
	eval := func(js string) bool {
		t.Helper()
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js))
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return ok
	}

	// On load the page draws no plan: GraphiQL's introspection is not the
	// user's query.
	run(chromedp.Navigate(srv.URL + "/?query=" + url.QueryEscape(query)))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`window.schemaLoaded === true`)); err != nil {
		t.Fatalf("GraphiQL never loaded the schema: %v", err)
	}
	if !eval(`window.lastPlan === undefined && document.querySelectorAll('#plan .row').length === 0 && document.getElementById('cost').textContent === 'extensions.cost of the last response'`) {
		t.Error("the page drew a plan or a cost before any query was run")
	}

	// The seed's query at a narrow and a wide window: nothing runs off the
	// page, the result and the plan each keep a readable width. Screenshots
	// go to .build/console-<width>.png.
	for _, width := range []int64{800, 1400} {
		run(chromedp.EmulateViewport(width, 900))
		run(chromedp.Navigate(srv.URL + "/?run=1&query=" + url.QueryEscape(query)))
		run(chromedp.WaitVisible(".graphiql-container"))
		if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes("dynamodbRoundTrips") && document.body.innerText.includes("Post 2")`)); err != nil {
			shot(t, ctx, fmt.Sprintf("console-%d-failed.png", width))
			t.Fatalf("%d px: the result never showed: %v", width, err)
		}
		layout := `(() => {
			const w = (sel) => document.querySelector(sel).getBoundingClientRect();
			const side = w('#side'), response = w('.graphiql-response');
			return [document.documentElement.scrollWidth, window.innerWidth, Math.round(side.width), Math.round(side.right), Math.round(response.width)];
		})()`
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]int](layout))
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		if scroll, inner, side, right, response := got[0], got[1], got[2], got[3], got[4]; scroll > inner || right > inner || side < 300 || response < 300 {
			t.Errorf("%d px: page %d wide in a window of %d, side panel %d px ending at %d, result %d px; want nothing past the window, both at least 300 px", width, scroll, inner, side, right, response)
		}
		shot(t, ctx, fmt.Sprintf("console-%d.png", width))
	}
	html, err := chromedp.Run(ctx, chromedp.OuterHTML("html"))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for _, want := range []string{"graphiql-container", "Alice", "Post 2", "extensions.cost", "lambdaInvocations", "dynamodbRoundTrips"} {
		if !strings.Contains(html, want) {
			t.Errorf("the rendered page has no %q", want)
		}
	}
	if t.Failed() {
		t.Logf("rendered page:\n%.3000s", html)
	}
	// The waterfall of the seed's query: its one invocation, each of its
	// requests a row under it, the four of the critical path in red, and
	// the early returns counted.
	checkWaterfall(t, ctx, 1, 4, "Comment.author")

	// A feed page, as carol: the feed's invocation, its round trips, the
	// authors answered early.
	run(chromedp.Navigate(srv.URL + "/?run=1&caller=carol&query=" + url.QueryEscape(`{ feed(limit: 5) { items { title author { name } } } }`)))
	checkWaterfall(t, ctx, 1, 3, "Post.author") // the feed's two round trips, then the authors
	shot(t, ctx, "console-feed.png")

	// A subscription, as alice: the page opens the real-time endpoint and
	// shows what arrives, bob's like of her post.
	sub := `subscription { onPostActivity(id: "` + sample.HelloPost + `") { id likeCount } }`
	run(chromedp.Navigate(srv.URL + "/?run=1&caller=alice&query=" + url.QueryEscape(sub)))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes('started: waiting')`)); err != nil {
		t.Fatalf("the subscription did not start: %v", err)
	}
	if r := post(t, srv.URL+"/graphql", devserver.Token("carol"), `mutation { likePost(postId: "`+sample.HelloPost+`") { id likeCount } }`); len(r.Errors) > 0 {
		t.Fatal(r.Errors)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.body.innerText.includes('"likeCount": 2')`)); err != nil {
		t.Errorf("the like did not show on the page: %v", err)
	}
	shot(t, ctx, "console-subscription.png")

	// A caller the page does not offer is refused where it shows, and the
	// query is not sent as the API key.
	run(chromedp.Navigate(srv.URL + "/?run=1&caller=zed&query=" + url.QueryEscape(query)))
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`(() => { const e = document.getElementById('caller-error');
		return !e.hidden && e.offsetHeight > 0 && e.textContent.includes('zed') && document.body.innerText.includes('unknown caller') && document.body.innerText.includes('zed'); })()`)); err != nil {
		t.Errorf("an unknown caller was not refused visibly: %v", err)
	}
	if !eval(`window.lastPlan === undefined && !document.body.innerText.includes("Post 2")`) {
		t.Error("the query of an unknown caller was answered")
	}
}

// shot saves a screenshot of the page to .build/name.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if len(png) < 10000 {
		t.Errorf("screenshot of %d bytes", len(png))
		return
	}
	path, _ := filepath.Abs(filepath.Join("../../.build", name))
	os.MkdirAll(filepath.Dir(path), 0o755)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Error(err)
	}
}

// checkWaterfall waits for the console's waterfall and checks its rows:
// invocations, one row per DynamoDB request of the plan, labelled with the
// index and the first key it read, critical of them in red, and the early
// returns of field counted; then that a row reached with the keyboard shows
// its details in the page.
func checkWaterfall(t *testing.T, ctx context.Context, invocations, critical int, field string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`!!window.lastPlan && document.querySelectorAll('#plan .row').length > 0`)); err != nil {
		t.Fatalf("no waterfall drawn: %v", err)
	}
	var got struct {
		Invocations, Requests, Critical, Planned int
		Unlabelled                               []string
		Early                                    string
	}
	js := `(() => {
		const rows = [...document.querySelectorAll('#plan .row.request, #plan .row.critical')].map((r) => r.querySelector('.label').textContent);
		const planned = window.lastPlan.invocations.flatMap((_, i) => window.lastPlan.requests.filter((r) => r.invocation === i));
		return {invocations: document.querySelectorAll('#plan .row.invocation').length,
			requests: rows.length,
			critical: document.querySelectorAll('#plan .row.critical').length,
			planned: window.lastPlan.requests.length,
			unlabelled: rows.filter((label, i) => { const r = planned[i];
				return !label.startsWith(r.operation + ' ' + (r.index || 'table')) || !label.includes((r.keysAsked || [''])[0].split(' ')[0]); }),
			early: document.querySelector('#plan .early').textContent};
	})()`
	raw, err := chromedp.Run(ctx, chromedp.Evaluate[json.RawMessage](js))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.Invocations != invocations || got.Requests != got.Planned || got.Planned == 0 || got.Critical != critical || !strings.Contains(got.Early, field) || len(got.Unlabelled) > 0 {
		t.Errorf("waterfall: %+v; want %d invocations, a row per request labelled with its index and key, %d critical, early returns of %s", got, invocations, critical, field)
	}
	// The first critical request, reached with the keyboard: its details
	// (keys, items, units, bytes) are shown in the page.
	if _, err := chromedp.Run(ctx, chromedp.Focus("#plan .row.critical")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.KeyEvent("\r")); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	detail, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('detail').textContent`))
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	for _, want := range []string{"keys:", "RCU", "bytes sent", "critical path"} {
		if !strings.Contains(detail, want) {
			t.Errorf("the selected request's details %q have no %q", detail, want)
		}
	}
}
