// Package removal holds the test that each optional feature can be left
// out as docs/layout.md says: delete its folder, lambda/<name>, and every
// line marked "// feature: <name>" (the lines that wire it in, in
// lambda/cmd, the stack and make dev). What is left must build (the
// functions, make dev's server, the stack) and pass the core's tests and
// event replays (go test ./lambda/... ./schema/...). And that a speed-up
// installed by lines marked "// speed-up: <name>" turns off with them and
// its folder lambda/internal/<name> deleted.
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

	"github.com/example/appsync-dynamo/local/treecopy"
)

// marker is a line that wires a feature or a speed-up in, and names it.
var marker = regexp.MustCompile(`// (feature|speed-up): ([a-z]+)\s*$`)

// A part is a feature or a speed-up: its kind, as its marker says, and
// its name.
type part struct{ kind, name string }

// folder is where the part lives.
func (p part) folder() string {
	if p.kind == "speed-up" {
		return "lambda/internal/" + p.name
	}
	return "lambda/" + p.name
}

// marked returns the tree's root, its files and the parts of kind its Go
// files mark, failing where docs/layout.md does not name a part's folder
// (and skipping under -short).
func marked(t *testing.T, kind string) (root string, files []string, parts []part) {
	if testing.Short() {
		t.Skip("builds and tests copies of the tree: make test runs it")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files = treecopy.Files(t, root)
	if parts = wired(t, root, files, kind); len(parts) == 0 {
		t.Fatalf("no line of the tree marks a %s (// %s: <name>)", kind, kind)
	}
	layout, err := os.ReadFile(filepath.Join(root, "docs/layout.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if !bytes.Contains(layout, []byte("`"+p.folder()+"`")) {
			t.Errorf("docs/layout.md does not say how to leave %s out", p.folder())
		}
	}
	return root, files, parts
}

// The core stands without each optional feature, and without all of
// them: a copy of the tree with the feature's folder and marked lines
// deleted (and those of the features built on it: their folders import
// it) builds, vets and passes the functions' tests and the stack builds.
func TestTheCoreStandsWithoutEachFeature(t *testing.T) {
	root, files, features := marked(t, "feature")
	type removal struct {
		name string
		gone []part
	}
	var removals []removal
	for _, f := range features {
		r := removal{"without " + f.name, builtOn(t, root, files, features, f)}
		if len(r.gone) > 1 {
			r.name += " (and " + strings.Join(names(r.gone[1:]), ", ") + ", built on it)"
		}
		removals = append(removals, r)
	}
	if len(features) > 1 {
		removals = append(removals, removal{"without " + strings.Join(names(features), ", "), features})
	}
	for _, r := range removals {
		gone := r.gone
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			copyWithout(t, root, dir, files, gone)
			if unused := deleteUnused(t, dir); len(unused) > 0 {
				t.Logf("left unused, deleted too: %s", strings.Join(unused, ", "))
			}
			treecopy.Run(t, dir, "go", "build", "./lambda/...", "./local/cmd/dev", "./schema/...")
			treecopy.Run(t, dir, "go", "vet", "./lambda/...", "./schema/...")
			treecopy.Run(t, filepath.Join(dir, "infra"), "go", "build", "./...")
			treecopy.Run(t, dir, "go", "test", "-count=1", "./lambda/...", "./schema/...")
		})
	}
}

// Each speed-up wired in by marked lines turns off with them deleted, and
// its folder: the functions build and their tests pass (the bootstrap's
// size, what it links).
func TestEachSpeedUpTurnsOff(t *testing.T) {
	root, files, speedUps := marked(t, "speed-up")
	for _, s := range speedUps {
		t.Run("without "+s.name, func(t *testing.T) {
			dir := t.TempDir()
			copyWithout(t, root, dir, files, []part{s})
			treecopy.Run(t, dir, "go", "vet", "./lambda/...")
			treecopy.Run(t, dir, "go", "test", "-count=1", "./lambda/cmd/...")
		})
	}
}

// wired are the parts of kind ("feature" or "speed-up") whose lines are
// marked in the tree's Go files, each with its folder.
// deleteUnused deletes from the copy in dir each package under lambda/
// that no function reaches any more (lambda/kept, once every feature that
// keeps a value is gone), as a person would whom docs/layout.md's test
// tells so, and returns their folders.
func deleteUnused(t *testing.T, dir string) []string {
	list := func(args ...string) []string {
		cmd := exec.Command("go", append([]string{"list", "-f", "{{.ImportPath}} {{.Dir}}"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Split(strings.TrimSpace(string(out)), "\n")
	}
	reached := list("-deps", "./lambda/cmd/...")
	var unused []string
	for _, pkg := range list("./lambda/...") {
		if slices.Contains(reached, pkg) {
			continue
		}
		folder := strings.Fields(pkg)[1]
		if err := os.RemoveAll(folder); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, folder)
		unused = append(unused, rel)
	}
	return unused
}

func names(parts []part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.name)
	}
	return out
}

// builtOn is f and every feature whose folder imports f's package (a hot
// post's page is built on hot keys), or one of those: a person leaving f
// out leaves them out with it.
func builtOn(t *testing.T, root string, files []string, features []part, f part) []part {
	gone := []part{f}
	for grew := true; grew; {
		grew = false
		for _, other := range features {
			if slices.Contains(gone, other) {
				continue
			}
			if slices.ContainsFunc(gone, func(g part) bool { return imports(t, root, files, other, g) }) {
				gone, grew = append(gone, other), true
			}
		}
	}
	return gone
}

// imports reports whether a file of p's folder imports q's package.
func imports(t *testing.T, root string, files []string, p, q part) bool {
	path := []byte(`"github.com/example/appsync-dynamo/` + q.folder() + `"`)
	for _, f := range files {
		if !strings.HasPrefix(f, p.folder()+"/") || !strings.HasSuffix(f, ".go") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(raw, path) {
			return true
		}
	}
	return false
}

func wired(t *testing.T, root string, files []string, kind string) []part {
	var parts []part
	for _, f := range files {
		if !strings.HasSuffix(f, ".go") {
			continue
		}
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(raw), "\n") {
			m := marker.FindStringSubmatch(line)
			if m == nil || m[1] != kind || slices.Contains(parts, part{m[1], m[2]}) {
				continue
			}
			p := part{m[1], m[2]}
			if _, err := os.Stat(filepath.Join(root, p.folder())); err != nil {
				t.Errorf("%s marks a line of %s %s, which has no folder %s", f, p.kind, p.name, p.folder())
			}
			parts = append(parts, p)
		}
	}
	slices.SortFunc(parts, func(a, b part) int { return strings.Compare(a.name, b.name) })
	return parts
}

// copyWithout copies files from root to dir, but for the folders of the
// parts gone and the lines that wire them in.
func copyWithout(t *testing.T, root, dir string, files []string, gone []part) {
	treecopy.Copy(t, root, dir, files, func(f string, raw []byte) ([]byte, bool) {
		if slices.ContainsFunc(gone, func(g part) bool { return strings.HasPrefix(f, g.folder()+"/") }) {
			return nil, false
		}
		if !strings.HasSuffix(f, ".go") {
			return raw, true
		}
		var kept []string
		for _, line := range strings.Split(string(raw), "\n") {
			if m := marker.FindStringSubmatch(line); m == nil || !slices.Contains(gone, part{m[1], m[2]}) {
				kept = append(kept, line)
			}
		}
		return []byte(strings.Join(kept, "\n")), true
	})
}
