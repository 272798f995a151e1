// Package extending holds the test that follows docs/extending.md: each
// change it walks through is a patch under docs/extending/, applied to a
// copy of the tree, whose generated files are then regenerated as the
// guide says (make update: the golden replies, the counted figures); the unit tests and
// the event replays must pass, the regenerated replies differ from the
// tree's only by what the change adds, and a query through the local
// AppSync reads what it added.
package extending_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/local/treecopy"
)

// change is one of the guide's changes: its patch, the JSON members it may
// add to the replies of the tree's events, and its query through the local
// AppSync (a test of local/executor, in testdata).
type change struct {
	patch, query string
	adds         []string
}

var changes = []change{
	{patch: "post-tags.patch", query: "post-tags_test.go.txt", adds: []string{"tags"}},
	{patch: "handle-available.patch", query: "handle-available_test.go.txt"},
	{patch: "bookmarks.patch", query: "bookmarks_test.go.txt", adds: []string{"bookmarkCount"}},
}

func TestTheGuidesChangesApplyAndWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests copies of the tree: make test runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := treecopy.Files(t, root)
	for _, c := range changes {
		t.Run(c.patch, func(t *testing.T) {
			dir := t.TempDir()
			treecopy.Copy(t, root, dir, files, func(_ string, raw []byte) ([]byte, bool) { return raw, true })
			treecopy.Run(t, dir, "git", "apply", filepath.Join(root, "docs/extending", c.patch))
			treecopy.Run(t, dir, "make", "-s", "update")
			goldens := "lambda/resolver/testdata/golden"
			sameBut(t, filepath.Join(root, goldens), filepath.Join(dir, goldens), c.adds)
			treecopy.Run(t, dir, "go", "test", "-count=1", "./lambda/...", "./schema/...", "./local/bench", "./local/capacity")
			treecopy.Run(t, dir, "go", "test", "-count=1", "-run", "TestTheDocumentsQueries", "./local/devserver")
			query, err := os.ReadFile(filepath.Join("testdata", c.query))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "local/executor/guide_test.go"), query, 0o644); err != nil {
				t.Fatal(err)
			}
			treecopy.Run(t, dir, "go", "test", "-count=1", "-run", "TestTheGuides", "./local/executor")
		})
	}
}

// sameBut fails t where a golden reply under was differs from its
// regeneration under now by more than the members adds.
func sameBut(t *testing.T, was, now string, adds []string) {
	t.Helper()
	err := filepath.WalkDir(was, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(was, path)
		var before, after any
		for p, v := range map[string]*any{path: &before, filepath.Join(now, rel): &after} {
			raw, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if err := json.Unmarshal(raw, v); err != nil {
				return err
			}
		}
		if !reflect.DeepEqual(without(after, adds), before) {
			t.Errorf("%s: the change alters more than it adds (%v)", rel, adds)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// without is v with the object members named in names left out, at every
// depth.
func without(v any, names []string) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range v {
			if !slices.Contains(names, k) {
				out[k] = without(e, names)
			}
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = without(e, names)
		}
		return out
	}
	return v
}
