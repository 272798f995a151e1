// Package bootstrap builds a Go Lambda function's bootstrap as the stack
// deploys it and make build builds it: for linux and the function's
// architecture, without cgo or the RPC shim, with trimmed paths and no
// symbols.
package bootstrap

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// goArch is the Go architecture of each Lambda one ("" is the stack's
// default, arm64).
var goArch = map[string]string{"": "arm64", "arm64": "arm64", "x86_64": "amd64"}

// Build builds the command cmd (a package path such as ./lambda/cmd/resolver,
// in the module at root) into dir/bootstrap for arch ("arm64", "x86_64" or
// ""). Its error is one line: what could not be built, and the compiler's
// first error.
func Build(root, cmd, dir, arch string) error {
	ga, ok := goArch[arch]
	if !ok {
		return fmt.Errorf("no Lambda architecture %q: arm64 or x86_64", arch)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w",
		"-o", filepath.Join(dir, "bootstrap"), cmd)
	build.Dir = root
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+ga, "CGO_ENABLED=0")
	var out bytes.Buffer
	build.Stdout, build.Stderr = &out, &out
	if err := build.Run(); err != nil {
		return fmt.Errorf("%s does not build (%s); make build shows all of it", cmd, firstError(out.String(), err))
	}
	return nil
}

// firstError is the first line of go build's output that is not the
// header of a package's errors ("# path"), or err when it printed none.
func firstError(out string, err error) string {
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			return line
		}
	}
	return err.Error()
}
