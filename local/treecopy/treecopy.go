// Package treecopy copies the project's tree for tests that change a copy
// and build and test it: local/removal's (each feature left out) and
// local/extending's (docs/extending.md's changes applied).
package treecopy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Files are the tree's files, as git lists them (tracked, and untracked
// but not ignored) and as they are in the working tree, relative to root.
func Files(t testing.TB, root string) []string {
	t.Helper()
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

// Copy copies files from root to dir, each through edit (its path and
// content; false leaves the file out).
func Copy(t testing.TB, root, dir string, files []string, edit func(path string, raw []byte) ([]byte, bool)) {
	t.Helper()
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		raw, keep := edit(f, raw)
		if !keep {
			continue
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

// Run runs the command in dir and fails the test with its output when it
// fails.
func Run(t testing.TB, dir string, name string, args ...string) {
	t.Helper()
	RunEnv(t, dir, nil, name, args...)
}

// RunEnv is Run with env added to the test's environment.
func RunEnv(t testing.TB, dir string, env []string, name string, args ...string) {
	t.Helper()
	cmd := Command(dir, name, args...)
	cmd.Env = append(cmd.Env, env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// Command is the command to run in the copy in dir, in the test's
// environment. The go command builds with -trimpath there (GOFLAGS): what
// a copy compiles then names no directory, so that the build cache serves
// a package no copy changed to every copy after the first, wherever it is.
func Command(dir string, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS="+strings.TrimSpace(os.Getenv("GOFLAGS")+" -trimpath"))
	return cmd
}
