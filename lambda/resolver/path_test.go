package resolver_test

import (
	"bufio"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// pathEnv, set, makes TestRequestPath the child run of
// TestAQueryPostCrossesFivePackagesOfThePattern: warm, then (unless it is
// "warm") once more.
const pathEnv = "RESOLVER_REQUEST_PATH"

// pathFiles is the most files a warm Query.post with comments and authors
// runs code in, the speed-ups' among them. It only comes down.
const pathFiles = 25

// The code a warm Query.post { title author { name } comments { items {
// body author { name } } } } runs, counted by Go's coverage counters: the
// packages whose counters a second request moves, less those the first
// alone did (cold start, table creation). A reader follows the request
// through the pattern's five packages; under them run the cost meter the
// DynamoDB client's middleware fills, the HTTP client, and the speed-ups
// installed (lambda/internal's).
func TestAQueryPostCrossesFivePackagesOfThePattern(t *testing.T) {
	if os.Getenv(pathEnv) != "" {
		return
	}
	if testing.Short() {
		t.Skip("needs DynamoDB Local, which make test starts: skipped under -short (make check)")
	}
	pattern := []string{"lambda/appsync", "lambda/errs", "lambda/payload", "lambda/resolver", "lambda/store"}
	under := []string{"lambda/awsenv", "lambda/cost"}
	warm, twice := coverage(t, "warm"), coverage(t, "twice")
	moved, files := map[string]bool{}, map[string]bool{}
	for block, n := range twice {
		if n > warm[block] {
			file, _, _ := strings.Cut(strings.TrimPrefix(block, "github.com/example/appsync-dynamo/"), ":")
			moved[filepath.Dir(file)], files[file] = true, true
		}
	}
	t.Logf("%d files: %v", len(files), slices.Sorted(maps.Keys(files)))
	if len(files) > pathFiles {
		t.Errorf("a Query.post with comments and authors runs code in %d files, past %d: a reader follows it through too many", len(files), pathFiles)
	}
	got := slices.Sorted(maps.Keys(moved))
	got = slices.DeleteFunc(got, func(p string) bool { return strings.HasPrefix(p, "lambda/internal/") })
	want := slices.Sorted(slices.Values(append(pattern, under...)))
	if !slices.Equal(got, want) {
		t.Errorf("a Query.post with comments and authors runs code in %v; want the pattern's %v and, under it, %v", got, pattern, under)
	}
}

// coverage runs TestRequestPath in a child go test with the counters of
// every package under lambda/, and returns each block's count.
func coverage(t *testing.T, run string) map[string]int {
	t.Helper()
	profile := filepath.Join(t.TempDir(), "cover.out")
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestRequestPath$", "-covermode=count",
		"-coverpkg=github.com/example/appsync-dynamo/lambda/...", "-coverprofile="+profile, ".")
	cmd.Env = append(os.Environ(), pathEnv+"="+run)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, out)
	}
	f, err := os.Open(profile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		block, count, ok := strings.Cut(lines.Text(), " ")
		if n, err := strconv.Atoi(count[strings.LastIndexByte(count, ' ')+1:]); ok && err == nil && block != "mode:" {
			counts[block] += n
		}
	}
	return counts
}

// TestRequestPath is the child run of
// TestAQueryPostCrossesFivePackagesOfThePattern (it does nothing
// otherwise): the post's event and its comments' authors' batch, once to
// warm the handler and, unless told "warm", once more.
func TestRequestPath(t *testing.T) {
	run := os.Getenv(pathEnv)
	if run == "" {
		return
	}
	h := readingHandler(t, appsync.EveryOccurrence, sample.Data(), storetest.Deterministic(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))...)
	request := func() {
		for _, file := range []string{"Query.post-with-comments.json", "Comment.author.json"} {
			payload, err := os.ReadFile(filepath.Join("..", "..", "events", file))
			if err != nil {
				t.Fatal(err)
			}
			if _, ierr, _ := invoke(t, h, payload); ierr != nil {
				t.Fatalf("%s: %s", file, ierr.Message)
			}
		}
	}
	request()
	if run != "warm" {
		request()
	}
}
