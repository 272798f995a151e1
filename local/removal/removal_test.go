// Package removal holds the test that each optional feature can be left
// out as docs/layout.md says: delete its folder, lambda/<name>, and every
// line marked "// feature: <name>" (the lines that wire it in, in
// lambda/cmd, the stack and make dev). What is left must build (the
// functions, make dev's server, the stack), vet, and pass the core's tests
// and event replays. And that a speed-up installed by lines marked
// "// speed-up: <name>" turns off with them and its folder
// lambda/internal/<name> deleted.
//
// What a removal costs the suite grows with the feature's wiring, not with
// the tree: every copy builds and vets (the build cache shares what did
// not change), and runs the tests of only the packages whose code the
// removal changed, itself or through what they import (package affected),
// beyond the largest removal already tested that it contains (the copy
// without every feature tests what leaving out the last features changed).
package removal_test

import (
	"bytes"
	"iter"
	"os"
	"path"
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

// core are the packages a removal's copy tests: the functions' and the
// schema's.
var core = []string{"./lambda/...", "./schema/..."}

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
// deleted (and those of the features built on it) builds and vets, the
// stack builds, and the tests of what the removal changed pass. What it
// changed is counted from the largest removal before it whose features it
// leaves out too, if any: a package that copy tested, or the tree's own
// run, as its code and tests are here is not tested again.
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
	all := removal{"without " + strings.Join(names(features), ", "), features}
	if len(features) > 1 {
		removals = append(removals, all)
	}
	var done [][]part
	for _, r := range removals {
		t.Run(r.name, func(t *testing.T) {
			dir := t.TempDir()
			changed := copyWithout(t, root, dir, files, r.gone)
			if unused := deleteUnused(t, dir); len(unused) > 0 {
				t.Logf("left unused, deleted too: %s", strings.Join(unused, ", "))
			}
			buildAndVet(t, dir)
			treecopy.Run(t, filepath.Join(dir, "infra"), "go", "vet", "./...") // its tests type-checked too
			if base := largestWithin(done, r.gone); len(base) > 0 {
				t.Logf("beyond the copy without %s", strings.Join(names(base), ", "))
				changed = changedBy(t, root, files, slices.DeleteFunc(slices.Clone(r.gone), func(p part) bool { return slices.Contains(base, p) }))
			}
			testIn(t, dir, affected(t, dir, changed))
		})
		done = append(done, r.gone)
	}
}

// largestWithin is the largest of removals whose parts are all in gone
// (nil: none).
func largestWithin(removals [][]part, gone []part) []part {
	var base []part
	for _, r := range removals {
		if len(r) > len(base) && !slices.ContainsFunc(r, func(p part) bool { return !slices.Contains(gone, p) }) {
			base = r
		}
	}
	return base
}

// Each speed-up wired in by marked lines turns off with them deleted, and
// its folder: the functions build and vet, the resolver's main and those
// whose files changed pass their tests (the bootstrap's size, what it
// links), and the other packages whose files changed their short tests
// (no DynamoDB Local). A speed-up changes no answer, which its own tests
// hold it to against its reference, so nothing built on those packages is
// tested again.
func TestEachSpeedUpTurnsOff(t *testing.T) {
	root, files, speedUps := marked(t, "speed-up")
	for _, s := range speedUps {
		t.Run("without "+s.name, func(t *testing.T) {
			dir := t.TempDir()
			changed := copyWithout(t, root, dir, files, []part{s})
			buildAndVet(t, dir)
			mains, others := []string{"./lambda/cmd/resolver"}, []string(nil)
			for _, f := range changed {
				p := "./" + path.Dir(f)
				switch {
				case strings.HasPrefix(p, "./lambda/cmd/"):
					mains = append(mains, p)
				default:
					others = append(others, p)
				}
			}
			testIn(t, dir, slices.Compact(slices.Sorted(slices.Values(mains))))
			if len(others) > 0 {
				testIn(t, dir, slices.Compact(slices.Sorted(slices.Values(others))), "-short")
			}
		})
	}
}

// buildAndVet builds the functions, make dev's server and the schema in
// the copy in dir, and vets the functions and the schema.
func buildAndVet(t *testing.T, dir string) {
	t.Helper()
	treecopy.Run(t, dir, "go", "build", "./lambda/...", "./local/cmd/dev", "./schema/...")
	treecopy.Run(t, dir, "go", append([]string{"vet"}, core...)...)
}

// testIn runs the tests of packages in the copy in dir, logging which.
func testIn(t *testing.T, dir string, packages []string, flags ...string) {
	t.Helper()
	if len(packages) == 0 {
		t.Log("no test's code changed")
		return
	}
	t.Logf("tests of %s", strings.Join(slices.Concat(flags, packages), " "))
	// nobulk: a removal changes wiring, not what the tests at volume load.
	treecopy.Run(t, dir, "go", slices.Concat([]string{"test", "-count=1", "-tags=nobulk"}, flags, packages)...)
}

func names(parts []part) []string {
	var out []string
	for _, p := range parts {
		out = append(out, p.name)
	}
	return out
}

// builtOn is f and every feature whose folder imports f's package (a hot
// post's page is built on hot keys), or that a file all f's wires in (the
// projector's function runs the feed's projection), or built on one of
// those: a person leaving f out leaves them out with it.
func builtOn(t *testing.T, root string, files []string, features []part, f part) []part {
	gone := []part{f}
	for grew := true; grew; {
		grew = false
		for _, other := range features {
			if slices.Contains(gone, other) {
				continue
			}
			if slices.ContainsFunc(gone, func(g part) bool { return imports(t, root, files, other, g) || wiresIn(t, root, files, g, other) }) {
				gone, grew = append(gone, other), true
			}
		}
	}
	return gone
}

// goFiles yields each Go file of files under root, with its content.
func goFiles(t *testing.T, root string, files []string) iter.Seq2[string, []byte] {
	return func(yield func(string, []byte) bool) {
		for _, f := range files {
			if !strings.HasSuffix(f, ".go") {
				continue
			}
			raw, err := os.ReadFile(filepath.Join(root, f))
			if err != nil {
				t.Fatal(err)
			}
			if !yield(f, raw) {
				return
			}
		}
	}
}

// wiresIn reports whether a file whose package clause is marked as p's
// has a line marked as q's.
func wiresIn(t *testing.T, root string, files []string, p, q part) bool {
	for _, raw := range goFiles(t, root, files) {
		if m := marker.FindStringSubmatch(packageClause(raw)); m == nil || (part{m[1], m[2]}) != p {
			continue
		}
		for line := range strings.Lines(string(raw)) {
			if m := marker.FindStringSubmatch(strings.TrimRight(line, "\n")); m != nil && (part{m[1], m[2]}) == q {
				return true
			}
		}
	}
	return false
}

// imports reports whether a file of p's folder imports q's package.
func imports(t *testing.T, root string, files []string, p, q part) bool {
	path := []byte(`"github.com/example/appsync-dynamo/` + q.folder() + `"`)
	for f, raw := range goFiles(t, root, files) {
		if strings.HasPrefix(f, p.folder()+"/") && bytes.Contains(raw, path) {
			return true
		}
	}
	return false
}

// wired are the parts of kind ("feature" or "speed-up") whose lines are
// marked in the tree's Go files, each with its folder.
func wired(t *testing.T, root string, files []string, kind string) []part {
	var parts []part
	for f, raw := range goFiles(t, root, files) {
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
// parts gone, the lines that wire them in and the files whose package
// clause is marked as theirs (a feature's function, its part of the
// stack), and returns the files it left out or changed.
func copyWithout(t *testing.T, root, dir string, files []string, gone []part) (changed []string) {
	treecopy.Copy(t, root, dir, files, func(f string, raw []byte) ([]byte, bool) {
		out, kept, differs := without(f, raw, gone)
		if differs {
			changed = append(changed, f)
		}
		return out, kept
	})
	return changed
}

// changedBy are the files copyWithout would leave out or change, less the
// folders it leaves out.
func changedBy(t *testing.T, root string, files []string, gone []part) (changed []string) {
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, differs := without(f, raw, gone); differs {
			changed = append(changed, f)
		}
	}
	return changed
}

// without is the file f (raw) as a copy without the parts gone holds it:
// kept false when it leaves it out; differs reports a Go file left out or
// changed (a file of a folder gone is neither).
func without(f string, raw []byte, gone []part) (out []byte, kept, differs bool) {
	if slices.ContainsFunc(gone, func(g part) bool { return strings.HasPrefix(f, g.folder()+"/") }) {
		return nil, false, false
	}
	if !strings.HasSuffix(f, ".go") {
		return raw, true, false
	}
	if m := marker.FindStringSubmatch(packageClause(raw)); m != nil && slices.Contains(gone, part{m[1], m[2]}) {
		return nil, false, true
	}
	var lines []string
	all := strings.Split(string(raw), "\n")
	for _, line := range all {
		if m := marker.FindStringSubmatch(line); m == nil || !slices.Contains(gone, part{m[1], m[2]}) {
			lines = append(lines, line)
		}
	}
	return []byte(strings.Join(lines, "\n")), true, len(lines) < len(all)
}

// packageClause is the Go file's package clause line ("" when none).
func packageClause(raw []byte) string {
	for line := range strings.Lines(string(raw)) {
		if strings.HasPrefix(line, "package ") {
			return strings.TrimRight(line, "\n")
		}
	}
	return ""
}
