// Package extending holds the test that follows docs/extending.md: each
// change it walks through is a script under docs/extending/ (its patch,
// then the events it records with make event), run in a copy of the tree,
// whose generated files are then regenerated as the guide says (make
// update: the golden replies, the counted figures); the unit tests and
// the event replays must pass, the regenerated replies differ from the
// tree's only by what the change adds, and a query through the local
// AppSync reads what it added.
package extending_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/treecopy"
)

// change is one of the guide's changes: its name (its script and patch
// under docs/extending), the most files its patch may change (0: no
// bound), the JSON
// members it may add to the replies of the tree's events, and its query
// through the local AppSync (a test of local/executor, in testdata).
type change struct {
	name     string
	maxFiles int
	adds     []string
}

var changes = []change{
	{name: "post-tags", maxFiles: 5, adds: []string{"tags"}},
	{name: "handle-available"},
	{name: "bookmarks", maxFiles: 10, adds: []string{"bookmarkCount"}},
}

// The guide shows each change's commands as its script runs them, and says
// how many files its patch changes; a scalar field's patch changes at most
// 5 files, a child list's at most 10.
func TestTheGuideShowsEachChangesCommandsAndSize(t *testing.T) {
	guide, err := os.ReadFile("../../docs/extending.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range changes {
		script, err := os.ReadFile(filepath.Join("../../docs/extending", c.name+".sh"))
		if err != nil {
			t.Fatal(err)
		}
		for line := range strings.Lines(string(script)) {
			if line = strings.TrimSpace(line); strings.HasPrefix(line, "make ") && !strings.Contains(string(guide), line) {
				t.Errorf("docs/extending.md does not show %s.sh's command\n%s", c.name, line)
			}
		}
		patch, err := os.ReadFile(filepath.Join("../../docs/extending", c.name+".patch"))
		if err != nil {
			t.Fatal(err)
		}
		files := strings.Count(string(patch), "\ndiff --git ") + 1
		if c.maxFiles > 0 && files > c.maxFiles {
			t.Errorf("%s.patch changes %d files, more than the %d such a change may ask for", c.name, files, c.maxFiles)
		}
		if said := fmt.Sprintf("`%s.patch` changes %d files", c.name, files); !strings.Contains(string(guide), said) {
			t.Errorf("docs/extending.md does not say %q", said)
		}
	}
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
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			treecopy.Copy(t, root, dir, files, func(_ string, raw []byte) ([]byte, bool) { return raw, true })
			treecopy.Run(t, dir, "sh", filepath.Join("docs/extending", c.name+".sh"))
			treecopy.Run(t, dir, "make", "-s", "update")
			goldens := "lambda/resolver/testdata/golden"
			sameBut(t, filepath.Join(root, goldens), filepath.Join(dir, goldens), c.adds)
			treecopy.Run(t, dir, "go", "test", "-count=1", "./lambda/...", "./schema/...", "./local/bench", "./local/capacity")
			treecopy.Run(t, dir, "go", "test", "-count=1", "-run", "TestTheDocumentsQueries", "./local/devserver")
			query, err := os.ReadFile(filepath.Join("testdata", c.name+"_test.go.txt"))
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
