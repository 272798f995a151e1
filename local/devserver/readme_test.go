package devserver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"testing"
	"time"

	"net/http/httptest"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The queries the README and docs/local.md show, each sent as its curl
// command sends it to make dev's server over make dev's data, answer what
// the documents say: every figure of the cost shown after it, and for the
// README's first, the posts and comments it counts, the early returns and
// the headline table's figures.
func TestTheDocumentsQueriesAnswerWhatTheySay(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{
		Endpoint: storetest.Endpoint(t), Table: fmt.Sprintf("readme-%d-%d", os.Getpid(), time.Now().UnixNano()), Data: sample.Dev(time.Now())})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	for _, file := range []string{"README.md", "docs/local.md"} {
		doc, err := os.ReadFile("../../" + file)
		if err != nil {
			t.Fatal(err)
		}
		m := match(t, doc, "(?s)curl -s http://127.0.0.1:4000/graphql [^`]*?-d '(\\{[^`]*?\\})'\n```.*?```json\n\"extensions\": \\{\"cost\": (\\{.*?\\})\\}\n```")
		var said map[string]any
		if err := json.Unmarshal(m[2], &said); err != nil {
			t.Fatalf("%s's extensions block: %v", file, err)
		}
		answer, cost := send(t, srv.URL, m[1])
		block := m[2]
		for k, v := range said {
			if reflect.DeepEqual(cost[k], v) {
				continue
			}
			if n, ok := cost[k].(float64); ok && *update {
				figure := regexp.MustCompile(`("` + regexp.QuoteMeta(k) + `": )[0-9.]+`)
				block = figure.ReplaceAll(block, []byte("${1}"+strconv.FormatFloat(n, 'f', -1, 64)))
				continue
			}
			t.Errorf("%s's cost says %s: %v; the query's: %v (go test ./local/devserver -run TestTheDocumentsQueries -update rewrites its figures)", file, k, v, cost[k])
		}
		if *update && !bytes.Equal(block, m[2]) {
			doc = bytes.Replace(doc, m[2], block, 1)
			if err := os.WriteFile("../../"+file, doc, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if file == "README.md" {
			checkTheFirstQuery(t, doc, answer, cost)
		}
		if t.Failed() {
			shown, _ := json.Marshal(cost)
			t.Logf("%s's query costs %s", file, shown)
		}
	}
}

var update = flag.Bool("update", false, "rewrite the documents' cost figures")

// send posts body to the server at url with the headers the documents'
// curl command sends to make dev (curl 7.88.1, Debian 12's), and returns its
// answer and cost: the headers are part of each Lambda event, so its
// payload bytes count them.
func send(t *testing.T, url string, body []byte) (answer json.RawMessage, cost map[string]any) {
	req, err := http.NewRequest(http.MethodPost, url+"/graphql", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "127.0.0.1:4000"
	req.Header.Set("User-Agent", "curl/7.88.1")
	req.Header.Set("Accept", "*/*")
	req.Header.Set("content-type", "application/json")
	client := &http.Client{Transport: &http.Transport{DisableCompression: true}} // no Accept-Encoding
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got struct {
		Data       json.RawMessage
		Extensions struct{ Cost map[string]any }
	}
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	return got.Data, got.Extensions.Cost
}

// checkTheFirstQuery checks what the README says in words and in its
// headline table about its first query against its answer and cost.
func checkTheFirstQuery(t *testing.T, readme []byte, answer json.RawMessage, cost map[string]any) {
	said := match(t, readme, `her (\d+) posts, their (\d+) comments`)
	early := match(t, readme, `(?s)the\s+(\d+) child fields below return those answers early`)[1]
	headline := match(t, readme, `The seed's query \(`+"`make dev`"+`'s data\) \| (\d+) invocation, (\d+) DynamoDB requests, (\d+) round trips`)
	var got struct {
		User struct {
			Posts struct {
				Items []struct{ Comments struct{ Items []any } }
			}
		}
	}
	if err := json.Unmarshal(answer, &got); err != nil {
		t.Fatal(err)
	}
	comments := 0
	for _, p := range got.User.Posts.Items {
		comments += len(p.Comments.Items)
	}
	requests := 0
	for _, n := range cost["dynamodb"].(map[string]any) {
		requests += int(n.(float64))
	}
	for _, c := range []struct {
		what      string
		said, got any
	}{
		{"posts", number(t, said[1]), len(got.User.Posts.Items)},
		{"comments", number(t, said[2]), comments},
		{"early returns", number(t, early), int(cost["earlyReturns"].(float64))},
		{"headline invocations", number(t, headline[1]), int(cost["lambdaInvocations"].(float64))},
		{"headline requests", number(t, headline[2]), requests},
		{"headline round trips", number(t, headline[3]), int(cost["dynamodbRoundTrips"].(float64))},
	} {
		if c.said != c.got {
			t.Errorf("the README says %v %s; the query answers %v", c.said, c.what, c.got)
		}
	}
}

// match is the submatches of pattern in text, failing the test when the
// text has none.
func match(t *testing.T, text []byte, pattern string) [][]byte {
	t.Helper()
	m := regexp.MustCompile(pattern).FindSubmatch(text)
	if m == nil {
		t.Fatalf("the document has no %s", pattern)
	}
	return m
}

func number(t *testing.T, b []byte) int {
	t.Helper()
	n, err := strconv.Atoi(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
