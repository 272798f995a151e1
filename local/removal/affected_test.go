package removal_test

import (
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// module is the import path of the tree's root.
const module = "github.com/example/appsync-dynamo"

// affected are the core's packages in the copy in dir whose tests build
// from a file in changed: one of their tests, or the code of any package
// their test binary links (their own included). The others link what the tree
// links, so make test's run of the tree has run them as they are. A
// package left out of the copy changes its importers' import lines, and
// so is found through them.
func affected(t *testing.T, dir string, changed []string) []string {
	t.Helper()
	code, tests := map[string]bool{}, map[string]bool{}
	for _, f := range changed {
		pkg := path.Join(module, path.Dir(f))
		if strings.HasSuffix(f, "_test.go") {
			tests[pkg] = true
		} else {
			code[pkg] = true
		}
	}
	out := goList(t, dir, append([]string{"-test", "-f", "{{.ImportPath}}\t{{join .Deps \"\t\"}}"}, core...)...)
	var packages []string
	for line := range strings.Lines(out) {
		fields := strings.Split(strings.TrimSpace(line), "\t")
		pkg, ok := strings.CutSuffix(fields[0], ".test")
		if !ok {
			continue
		}
		if tests[pkg] || slices.ContainsFunc(fields[1:], func(dep string) bool {
			dep, _, _ = strings.Cut(dep, " [")
			return code[dep]
		}) {
			packages = append(packages, "."+strings.TrimPrefix(pkg, module))
		}
	}
	slices.Sort(packages)
	return packages
}

// deleteUnused deletes from the copy in dir each package under lambda/
// that no function reaches any more (lambda/kept, once every feature that
// keeps a value is gone), as a person would whom docs/layout.md's test
// tells so, and returns their folders.
func deleteUnused(t *testing.T, dir string) []string {
	list := func(args ...string) []string {
		out := goList(t, dir, append([]string{"-f", "{{.ImportPath}} {{.Dir}}"}, args...)...)
		return strings.Split(strings.TrimSpace(out), "\n")
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

// goList runs go list with args in dir and returns what it prints; a
// copy that does not load (a core file importing a folder the removal
// deleted) fails the test with go list's own words.
func goList(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
