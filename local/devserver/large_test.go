package devserver_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The largest merges a client can send through make dev (issue 36): 8,000
// and 32,000 copies of `author { name }` in one post, and inline fragments
// nested two by two 14 levels deep (753 kB, past which the body's 1 MB
// bound refuses them). Each is answered, or refused with a clear error,
// within AppSync's request time, while a small query sent after them is
// answered first: validation no longer holds a core for minutes.
func TestTheLargestMergesThroughMakeDev(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
		Table: fmt.Sprintf("large-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	post1 := `post(id: "` + sample.HelloPost + `")`
	var tree func(int) string
	tree = func(l int) string {
		if l == 0 {
			return "title author { name } "
		}
		inner := tree(l - 1)
		return "... on Post { " + inner + "} ... { " + inner + "} "
	}
	large := map[string]string{
		"8,000 copies":                            `{ ` + post1 + ` { ` + strings.Repeat("author { name } ", 8000) + `} }`,
		"32,000 copies":                           `{ ` + post1 + ` { ` + strings.Repeat("author { name } ", 32000) + `} }`,
		"inline fragments, 14 levels":             `{ ` + post1 + ` { ` + tree(14) + `} }`,
		"inline fragments, 15 levels (over 1 MB)": `{ ` + post1 + ` { ` + tree(15) + `} }`,
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var lastLarge time.Time
	for name, q := range large {
		wg.Go(func() {
			start := time.Now()
			r := post(t, srv.URL+"/graphql", "", q)
			took := time.Since(start)
			mu.Lock()
			if now := time.Now(); now.After(lastLarge) {
				lastLarge = now
			}
			mu.Unlock()
			switch {
			case took > executor.RequestTimeout:
				t.Errorf("%s (%d bytes): %v, past the request's %v", name, len(q), took, executor.RequestTimeout)
			case len(r.Errors) == 0 && fmt.Sprint(r.Data["post"]) == "<nil>":
				t.Errorf("%s: neither the post nor an error: %+v", name, r)
			case len(r.Errors) > 0 && r.Errors[0].ErrorType == "":
				t.Errorf("%s: an error without its type: %+v", name, r.Errors)
			}
			t.Logf("%s (%d bytes): %v, %d errors %.120v", name, len(q), took, len(r.Errors), r.Errors)
		})
	}
	time.Sleep(50 * time.Millisecond) // the large ones under way
	small := post(t, srv.URL+"/graphql", "", `{ `+post1+` { title } }`)
	smallDone := time.Now()
	wg.Wait()
	if small.Data["post"] == nil || !smallDone.Before(lastLarge) {
		t.Errorf("a small query sent meanwhile: %+v, answered before the large ones: %v", small, smallDone.Before(lastLarge))
	}
}
