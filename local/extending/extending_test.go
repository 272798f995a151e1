// Package extending holds the test that follows docs/extending.md: each
// change it walks through is a script under docs/extending/ (its patch,
// then the events it records with make event). The three are made
// together in one copy of the tree, whose generated files are then
// regenerated as the guide says (make update: the golden replies, the
// counted figures); the unit tests and the event replays must pass, the
// regenerated replies differ from the tree's only by what the changes add,
// and a query through the local AppSync reads what each added.
//
// A patch is applied as git apply --3way applies it: to the files it was
// written against (the blobs its index lines name), then merged forward
// into the tree, so that a copy whose owner has changed the same files
// (a field, a route, a row at the end of a list) still takes it, and only
// a real conflict fails, naming the file and the lines.
package extending_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/treecopy"
)

// change is one of the guide's changes: its name (its script and patch
// under docs/extending), the most files its patch may change (0: no
// bound), and the JSON members it may add to the replies of the tree's
// events. Its query through the local AppSync is a test of
// local/executor, in testdata.
type change struct {
	name     string
	maxFiles int
	adds     []string
}

var changes = []change{
	{name: "post-tags", maxFiles: 5, adds: []string{"tags"}},
	{name: "handle-available"},
	{name: "bookmarks", maxFiles: 9, adds: []string{"bookmarkCount"}},
}

// retire is what a copy's owner does to stop testing the guide's changes
// against their own.
const retire = "retire the guide's examples from your copy: rm docs/extending/*.patch"

// retired reports whether the guide's patches are gone (retire), so that
// the guide's tests have nothing to apply.
func retired(t *testing.T) bool {
	patches, err := filepath.Glob("../../docs/extending/*.patch")
	if err != nil {
		t.Fatal(err)
	}
	return len(patches) == 0
}

// The guide shows each change's commands as its script runs them, and says
// how many files its patch changes; a scalar field's patch changes at most
// 5 files, a child list's at most 9.
func TestTheGuideShowsEachChangesCommandsAndSize(t *testing.T) {
	if retired(t) {
		t.Skip("no docs/extending/*.patch: the guide's examples are retired from this copy")
	}
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
		files := patchFiles(t, filepath.Join("../../docs/extending", c.name+".patch"))
		if c.maxFiles > 0 && len(files) > c.maxFiles {
			t.Errorf("%s.patch changes %d files, more than the %d such a change may ask for", c.name, len(files), c.maxFiles)
		}
		if said := fmt.Sprintf("`%s.patch` changes %d files", c.name, len(files)); !strings.Contains(string(guide), said) {
			t.Errorf("docs/extending.md does not say %q", said)
		}
	}
}

// The guide's three changes, made together in one copy of the tree as its
// scripts make them, then make update: the copy's tests pass, and the
// replies of the tree's events change by no more than what they add.
func TestTheGuidesChangesApplyAndWork(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and tests a copy of the tree: make test runs it")
	}
	if retired(t) {
		t.Skip("no docs/extending/*.patch: the guide's examples are retired from this copy")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	treecopy.Copy(t, root, dir, treecopy.Files(t, root), func(_ string, raw []byte) ([]byte, bool) { return raw, true })
	gitIndex(t, root, dir, ".")
	var adds []string
	for _, c := range changes {
		if out, err := run(dir, "sh", filepath.Join("docs/extending", c.name+".sh")); err != nil {
			t.Fatalf("%s\n%s", conflict(c.name, dir, out), out)
		}
		adds = append(adds, c.adds...)
	}
	treecopy.Run(t, dir, "make", "-s", "update")
	goldens := "lambda/resolver/testdata/golden"
	sameBut(t, filepath.Join(root, goldens), filepath.Join(dir, goldens), adds)
	// Not the tests at volume (nobulk): the changes are a field, a list and
	// a root field, not volume. Nor again the tests make update has just
	// run to write the goldens and the documents' figures (the replays,
	// the writes and readings tables, the documents' queries, trending's
	// costs, the capacity model's check): they would compare what they
	// have just written, and sameBut has checked the goldens' change.
	treecopy.Run(t, dir, "go", "test", "-count=1", "-tags=nobulk", "-skip", updated, "./lambda/...", "./schema/...", "./local/bench", "./local/capacity")
	for _, c := range changes {
		query, err := os.ReadFile(filepath.Join("testdata", c.name+"_test.go.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "local/executor/guide_"+c.name+"_test.go"), query, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	treecopy.Run(t, dir, "go", "test", "-count=1", "-run", "TestTheGuides", "./local/executor")
}

// updated are the tests make update runs with -update (the Makefile's
// update target, which TestMakeUpdateRunsWhatTheGuideSkips holds to it).
const updated = "^(TestReplayEvents|TestWhatEachReadingCosts|TestEarlyReturnBeatsTheOtherLayouts|TestWhatEveryMutationCosts|TestLocalReportsWhatTheModelCosts|TestTheDocumentsQueriesAnswerWhatTheySay|TestWhatTrendingCosts)$"

// The guide's test skips in its copy only tests that make update runs: each
// name in updated is named by the update target of the Makefile.
func TestMakeUpdateRunsWhatTheGuideSkips(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	target := string(makefile[bytes.Index(makefile, []byte("\nupdate:")):])
	target = target[:strings.Index(target, "\n\n")]
	for _, name := range strings.Split(strings.Trim(updated, "^()$"), "|") {
		if short := strings.TrimPrefix(name, "Test"); !strings.Contains(target, name) && !strings.Contains(target, short[:min(len(short), 14)]) {
			t.Errorf("the guide's test skips %s, which make update does not run", name)
		}
	}
}

// A copy its owner has extended still takes the guide's changes: after
// testdata/owner.patch (Post.pinned and Mutation.pinPost: a field, a
// mutation, its route, resolver and store method, a row of the access
// patterns and a measured write, each at the end of its list, as a
// person adds their own), each of the guide's patches merges in, as its
// script applies it, without a conflict. (The whole change, its events
// and its regenerated figures, passed make test with the guide's test in
// it; here only what it does to the files the patches touch.)
func TestAnOwnersChangesTakeTheGuidesPatches(t *testing.T) {
	if retired(t) {
		t.Skip("no docs/extending/*.patch: the guide's examples are retired from this copy")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	patches := []string{"local/extending/testdata/owner.patch"}
	for _, c := range changes {
		patches = append(patches, "docs/extending/"+c.name+".patch")
	}
	var touched []string
	for _, p := range patches {
		for _, f := range patchFiles(t, filepath.Join(root, p)) {
			if _, err := os.Stat(filepath.Join(root, f)); err == nil { // not one the patch creates
				touched = append(touched, f)
			}
		}
	}
	dir := t.TempDir()
	treecopy.Copy(t, root, dir, append(slices.Clone(patches), touched...), func(_ string, raw []byte) ([]byte, bool) { return raw, true })
	gitIndex(t, root, dir, ".")
	for _, p := range patches {
		if out, err := run(dir, "git", "apply", "--3way", p); err != nil {
			t.Errorf("%s\n%s", conflict(strings.TrimSuffix(filepath.Base(p), ".patch"), dir, out), out)
		}
	}
}

// gitIndex makes dir a Git repository whose index holds the files under
// path (relative to dir), and which reads the objects of root's
// repository: git apply --3way finds there the files a patch was written
// against.
func gitIndex(t *testing.T, root, dir, path string) {
	t.Helper()
	common, err := exec.Command("git", "-C", root, "rev-parse", "--path-format=absolute", "--git-common-dir").Output()
	if err != nil {
		t.Fatalf("git rev-parse in %s: %v", root, err)
	}
	treecopy.Run(t, dir, "git", "init", "-q")
	alternates := filepath.Join(dir, ".git", "objects", "info", "alternates")
	if err := os.WriteFile(alternates, []byte(filepath.Join(strings.TrimSpace(string(common)), "objects")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	treecopy.Run(t, dir, "git", "add", "-A", "--", path)
}

// run runs the command in the copy in dir, and returns its combined
// output.
func run(dir, name string, args ...string) ([]byte, error) {
	return treecopy.Command(dir, name, args...).CombinedOutput()
}

// conflict is the line that says why the patch of change did not go in,
// given what applying it printed: each file git left in conflict, and the
// lines of its first conflict, and what the copy's owner may do.
func conflict(change, dir string, out []byte) string {
	var where []string
	for line := range strings.Lines(string(out)) {
		file, ok := strings.CutPrefix(strings.TrimSpace(line), "U ")
		if !ok {
			continue
		}
		raw, _ := os.ReadFile(filepath.Join(dir, file))
		first := bytes.Index(raw, []byte("\n<<<<<<<"))
		last := bytes.Index(raw, []byte("\n>>>>>>>"))
		if first < 0 || last < first {
			where = append(where, file)
			continue
		}
		where = append(where, fmt.Sprintf("%s, lines %d-%d", file, bytes.Count(raw[:first+1], []byte("\n"))+1, bytes.Count(raw[:last+1], []byte("\n"))+1))
	}
	if len(where) == 0 && bytes.Contains(out, []byte("error: ")) { // git apply's own
		return fmt.Sprintf("docs/extending/%s.patch does not apply to this tree (below): merge it by hand and write it again, or %s", change, retire)
	}
	if len(where) == 0 {
		return fmt.Sprintf("docs/extending/%s.sh: its patch applied, then a step failed (%s, below): the patch leaves out part of the change, or this tree broke it; or %s",
			change, failure(out), retire)
	}
	return fmt.Sprintf("docs/extending/%s.patch conflicts with this tree in %s: merge it by hand and write it again (docs/extending.md), or %s",
		change, strings.Join(where, "; "), retire)
}

// failure is the line of out that says why a step failed: a panic, a
// compiler's error or make's, whichever comes first.
func failure(out []byte) string {
	for line := range strings.Lines(string(out)) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "panic: ") || strings.HasPrefix(line, "make: ") || goError.MatchString(line) {
			return line
		}
	}
	return "no error line"
}

var goError = regexp.MustCompile(`\.go:\d+:\d+: `)

// patchFiles are the files the patch at path changes.
func patchFiles(t *testing.T, path string) []string {
	t.Helper()
	patch, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for line := range strings.Lines(string(patch)) {
		if rest, ok := strings.CutPrefix(line, "diff --git a/"); ok {
			file, _, _ := strings.Cut(rest, " b/")
			files = append(files, file)
		}
	}
	return files
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
			t.Errorf("%s: the changes alter more than they add (%v)", rel, adds)
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
