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
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
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
	files := tracked(t, root)
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
			run(t, dir, "go", "build", "./lambda/...", "./local/cmd/dev", "./schema/...")
			run(t, dir, "go", "vet", "./lambda/...", "./schema/...")
			run(t, filepath.Join(dir, "infra"), "go", "build", "./...")
			run(t, dir, "go", "test", "-count=1", "./lambda/...", "./schema/...")
		})
	}
}

// tracked are the tree's files, as git lists them (tracked, and untracked
// but not ignored) and as they are in the working tree, relative to root.
func tracked(t *testing.T, root string) []string {
	cmd := exec.Command("git", "ls-files", "-co", "--exclude-standard")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	var files []string
	for _, f := range strings.Fields(string(out)) {
		if _, err := os.Stat(filepath.Join(root, f)); err == nil { // not deleted since
			files = append(files, f)
		}
	}
	return files
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
	for _, f := range files {
		if slices.ContainsFunc(gone, func(g string) bool { return strings.HasPrefix(f, "lambda/"+g+"/") }) {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(f, ".go") {
			var kept []string
			for _, line := range strings.Split(string(raw), "\n") {
				if m := marker.FindStringSubmatch(line); m == nil || !slices.Contains(gone, m[1]) {
					kept = append(kept, line)
				}
			}
			raw = []byte(strings.Join(kept, "\n"))
		}
		path := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, raw, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the command in dir and fails the test with its output when it
// fails.
func run(t *testing.T, dir string, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}
