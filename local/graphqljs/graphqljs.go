// Package graphqljs runs the local AppSync's reference in tests:
// graphql-js, from the console's packages (make console installs them;
// make test does), under Node.
package graphqljs

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Run runs the Node script (a path, relative to the calling test's
// package) with graphql-js's package path as its argument and in, as JSON,
// on its standard input, and decodes its standard output into out. Without
// graphql-js it fails tb, or skips it under -short.
func Run(tb testing.TB, script string, in, out any) {
	tb.Helper()
	_, here, _, _ := runtime.Caller(0)
	pkg := filepath.Join(filepath.Dir(here), "..", "console", "node_modules", "graphql")
	if _, err := os.Stat(pkg); err != nil {
		if testing.Short() {
			tb.Skip("graphql-js is installed by make console")
		}
		tb.Fatalf("graphql-js, the reference: %v (make test installs it with make console)", err)
	}
	input, err := json.Marshal(in)
	if err != nil {
		tb.Fatal(err)
	}
	cmd := exec.Command("node", script, pkg)
	cmd.Stdin, cmd.Stderr = bytes.NewReader(input), os.Stderr
	output, err := cmd.Output()
	if err != nil {
		tb.Fatalf("node %s: %v", script, err)
	}
	if err := json.Unmarshal(output, out); err != nil {
		tb.Fatalf("node %s answered what is not JSON: %v", script, err)
	}
}
