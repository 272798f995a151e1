// Package removal holds the test that each optional feature can be left
// out as docs/layout.md says: delete its folder, lambda/<name>, and every
// line marked "// feature: <name>" (the lines that wire it in, in
// lambda/cmd, the stack and make dev). What is left must build (the
// functions, make dev's server, the stack) and pass the core's tests and
// event replays (go test ./lambda/... ./schema/...).
package removal_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/treecopy"
)

// marker is a line that wires a feature in, and names it.
var marker = regexp.MustCompile(`// feature: ([a-z]+)\s*$`)

func TestTheCoreStandsWithoutEachFeature(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests copies of the tree: make test runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files := treecopy.Files(t, root)
	features := wired(t, root, files)
	if len(features) == 0 {
		t.Fatal("no line of the tree wires a feature in (// feature: <name>)")
	}
	layout, err := os.ReadFile(filepath.Join(root, "docs/layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	var removals [][]string
	for _, f := range features {
		if !bytes.Contains(layout, []byte("`lambda/"+f+"`")) {
			t.Errorf("docs/layout.md does not say how to remove lambda/%s", f)
		}
		removals = append(removals, []string{f})
	}
	if len(features) > 1 {
		removals = append(removals, features)
	}
	for _, gone := range removals {
		t.Run("without "+strings.Join(gone, ", "), func(t *testing.T) {
			dir := t.TempDir()
			copyWithout(t, root, dir, files, gone)
			treecopy.Run(t, dir, "go", "build", "./lambda/...", "./local/cmd/dev", "./schema/...")
			treecopy.Run(t, dir, "go", "vet", "./lambda/...", "./schema/...")
			treecopy.Run(t, filepath.Join(dir, "infra"), "go", "build", "./...")
			treecopy.Run(t, dir, "go", "test", "-count=1", "./lambda/...", "./schema/...")
		})
	}
}

// wired are the features whose lines are marked in the tree's Go files,
// each with its folder lambda/<name>.
func wired(t *testing.T, root string, files []string) []string {
	var features []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			if m := marker.FindStringSubmatch(line); m != nil && !slices.Contains(features, m[1]) {
				if _, err := os.Stat(filepath.Join(root, "lambda", m[1])); err != nil {
					t.Errorf("%s marks a line of feature %s, which has no folder lambda/%s", f, m[1], m[1])
				}
				features = append(features, m[1])
			}
		}
	}
	slices.Sort(features)
	return features
}

// copyWithout copies files from root to dir, but for the folders of the
// features gone and the lines that wire them in.
func copyWithout(t *testing.T, root, dir string, files, gone []string) {
	treecopy.Copy(t, root, dir, files, func(f string, raw []byte) ([]byte, bool) {
		if slices.ContainsFunc(gone, func(g string) bool { return strings.HasPrefix(f, "lambda/"+g+"/") }) {
			return nil, false
		}
		if !strings.HasSuffix(f, ".go") {
			return raw, true
		}
		var kept []string
		for _, line := range strings.Split(string(raw), "\n") {
			if m := marker.FindStringSubmatch(line); m == nil || !slices.Contains(gone, m[1]) {
				kept = append(kept, line)
			}
		}
		return []byte(strings.Join(kept, "\n")), true
	})
}
