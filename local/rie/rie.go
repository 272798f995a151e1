// Package rie runs the Lambda's real bootstrap binary under the AWS Lambda
// Runtime Interface Emulator, the program `sam local invoke` runs inside its
// container, without Docker: the same runtime API, the same JSON path.
package rie

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/example/appsync-dynamo/local/proc"
)

// AmazonRoots returns the five roots the function trusts first
// (lambda/internal/awstls embeds them), PEM-encoded, read from the tree
// whose top is root: a bundle as large as the one the function parses.
func AmazonRoots(root string) ([]byte, error) {
	files, err := filepath.Glob(filepath.Join(root, "lambda", "internal", "awstls", "roots", "*.pem"))
	if err == nil && len(files) == 0 {
		err = errors.New("no lambda/internal/awstls/roots/*.pem under " + root)
	}
	var out []byte
	for _, f := range files {
		if err == nil {
			var b []byte
			b, err = os.ReadFile(f)
			out = append(out, b...)
		}
	}
	return out, err
}

// EnvBinary names the variable that points at the aws-lambda-rie binary
// (the Makefile sets it to the one `make rie` installs); without it, the
// binary is looked up in that cache, then on PATH.
const EnvBinary = "AWS_LAMBDA_RIE"

// Binary returns the emulator's path, or an error saying how to install it.
func Binary() (string, error) {
	if p := os.Getenv(EnvBinary); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvBinary, p, err)
		}
		return p, nil
	}
	if cache, err := os.UserCacheDir(); err == nil {
		if found, _ := filepath.Glob(filepath.Join(cache, "appsync-dynamo", "bin", "aws-lambda-rie-*")); len(found) > 0 {
			return found[len(found)-1], nil
		}
	}
	p, err := exec.LookPath("aws-lambda-rie")
	if err != nil {
		return "", fmt.Errorf("aws-lambda-rie not found: run `make rie` (or set %s)", EnvBinary)
	}
	return p, nil
}

// Emulator is a running emulator serving one function.
type Emulator struct {
	url    string
	cmd    *exec.Cmd
	output *proc.Output
	done   chan struct{}
	mu     sync.Mutex // the emulator serves one invocation at a time
	calls  int        // invocations sent
}

// Start runs bootstrap under the emulator at binary, on loopback ports, with
// env added to this process's environment, and returns once it listens. A
// port found free can be taken by another process before the emulator
// binds it (the tests of other packages run meanwhile): the emulator then
// exits, and Start tries again on other ports, three times at most.
func Start(ctx context.Context, binary, bootstrap string, env []string) (*Emulator, error) {
	for attempt := 1; ; attempt++ {
		e, err := start(ctx, binary, bootstrap, env)
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return e, err
		}
	}
}

func start(ctx context.Context, binary, bootstrap string, env []string) (*Emulator, error) {
	apiPort, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	runtimePort, err := proc.FreePort()
	if err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(bootstrap)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(binary,
		"--runtime-interface-emulator-address", fmt.Sprintf("127.0.0.1:%d", apiPort),
		"--runtime-api-address", fmt.Sprintf("127.0.0.1:%d", runtimePort),
		abs)
	cmd.Env = append(os.Environ(), env...)
	out := &proc.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	e := &Emulator{url: fmt.Sprintf("http://127.0.0.1:%d/2015-03-31/functions/function/invocations", apiPort), cmd: cmd, output: out, done: make(chan struct{})}
	go func() { cmd.Wait(); close(e.done) }()
	deadline := time.Now().Add(15 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", apiPort), 200*time.Millisecond)
		if err == nil {
			conn.Close()
			return e, nil
		}
		select {
		case <-e.done:
			return nil, fmt.Errorf("aws-lambda-rie exited:\n%s", out)
		case <-ctx.Done():
			e.Stop()
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			e.Stop()
			return nil, errors.New("aws-lambda-rie did not start listening")
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Invoke sends payload to the function and returns its reply. A handler
// error comes back as the emulator returns it: HTTP 200 with
// {"errorMessage", "errorType"}.
func (e *Emulator) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls++
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("emulator answered %s: %s", resp.Status, body)
	}
	return body, nil
}

// Output returns what the emulator and the function printed (the function's logs).
func (e *Emulator) Output() string { return e.output.String() }

// Stop ends the emulator and the function.
func (e *Emulator) Stop() {
	e.cmd.Process.Signal(os.Interrupt)
	select {
	case <-e.done:
	case <-time.After(3 * time.Second):
		e.cmd.Process.Kill()
		<-e.done
	}
}
