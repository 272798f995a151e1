// Package ddblocal runs DynamoDB Local (AWS's own engine) on 127.0.0.1 for
// tests and for the local development server.
//
// The engine comes from the npm package amplify-dynamodb-simulator, which the
// Makefile fetches, verifies and unpacks into a cache outside the clone (see
// `make dynamodb-local`). Start compiles a small launcher (embedded here) that
// binds the server to the loopback address, which DynamoDB Local cannot do
// on its own, and that exits when the starting process goes away.
package ddblocal

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/example/appsync-dynamo/local/proc"
)

//go:embed LoopbackDynamoDBLocal.java
var launcherSource []byte

const launcherClass = "LoopbackDynamoDBLocal"

// EnvDir names the environment variable that points at the unpacked
// emulator directory (the one holding DynamoDBLocal.jar).
const EnvDir = "DYNAMODB_LOCAL_DIR"

// DefaultDir is where `make dynamodb-local` unpacks the engine: the
// emulator folder of amplify-dynamodb-simulator@2.9.30 under the user's cache.
func DefaultDir() string {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = filepath.Join(os.TempDir(), "cache")
	}
	return filepath.Join(cache, "appsync-dynamo", "dynamodb-local-2.9.30", "emulator")
}

// Dir returns the emulator directory: $DYNAMODB_LOCAL_DIR, else DefaultDir.
// It fails, naming the command that installs it, when the jar is missing.
func Dir() (string, error) {
	dir := os.Getenv(EnvDir)
	if dir == "" {
		dir = DefaultDir()
	}
	if _, err := os.Stat(filepath.Join(dir, "DynamoDBLocal.jar")); err != nil {
		return "", fmt.Errorf("DynamoDB Local is not installed in %s (run `make dynamodb-local`, or set %s): %w", dir, EnvDir, err)
	}
	return dir, nil
}

// StartInstalled starts the DynamoDB Local installed in Dir on a free port.
func StartInstalled(ctx context.Context) (*Server, error) {
	return StartInstalledOn(ctx, "127.0.0.1")
}

// StartInstalledOn is StartInstalled bound to host, one local address (a
// Docker network's gateway, where containers on that network reach it)
// instead of the loopback one.
func StartInstalledOn(ctx context.Context, host string) (*Server, error) {
	dir, err := Dir()
	if err != nil {
		return nil, err
	}
	return start(ctx, dir, host, 0)
}

// Server is a running DynamoDB Local, in memory.
type Server struct {
	// Endpoint is the server's URL, such as http://127.0.0.1:41234.
	Endpoint string

	cmd    *exec.Cmd
	stdin  io.WriteCloser
	output *proc.Output
	done   chan struct{}
	err    error
}

// Start runs DynamoDB Local from dir on a free loopback port, in memory, with
// telemetry off, and returns once it answers HTTP. port 0 picks a free port.
func Start(ctx context.Context, dir string, port int) (*Server, error) {
	return start(ctx, dir, "127.0.0.1", port)
}

func start(ctx context.Context, dir, host string, port int) (*Server, error) {
	classes, err := compileLauncher(dir)
	if err != nil {
		return nil, err
	}
	if port == 0 {
		if port, err = proc.FreePort(); err != nil {
			return nil, err
		}
	}
	sep := string(os.PathListSeparator)
	cmd := exec.Command("java",
		"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx512m",
		"-Djava.library.path="+filepath.Join(dir, "DynamoDBLocal_lib"), "-Dddblocal.host="+host,
		"-cp", strings.Join([]string{classes, filepath.Join(dir, "DynamoDBLocal.jar"), filepath.Join(dir, "DynamoDBLocal_lib", "*")}, sep),
		launcherClass, "-inMemory", "-port", fmt.Sprint(port))
	cmd.Env = append(os.Environ(), "DDB_LOCAL_TELEMETRY=0")
	out := &proc.Output{}
	cmd.Stdout, cmd.Stderr = out, out
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start DynamoDB Local (is java on PATH?): %w", err)
	}
	s := &Server{Endpoint: "http://" + net.JoinHostPort(host, fmt.Sprint(port)), cmd: cmd, stdin: stdin, output: out, done: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.done) }()
	if err := s.waitReady(ctx, 60*time.Second); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop ends the server and waits for it to exit.
func (s *Server) Stop() {
	s.stdin.Close() // the launcher exits on end of input
	select {
	case <-s.done:
	case <-time.After(5 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
}

// Output returns what the server has printed so far.
func (s *Server) Output() string { return s.output.String() }

func (s *Server) waitReady(ctx context.Context, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	client := &http.Client{Timeout: time.Second}
	for {
		select {
		case <-s.done:
			return fmt.Errorf("DynamoDB Local exited at start (%v):\n%s", s.err, s.Output())
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		// Any HTTP answer means the server is up; an unsigned request gets an error body.
		if resp, err := client.Get(s.Endpoint); err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("DynamoDB Local did not answer on %s within %v:\n%s", s.Endpoint, limit, s.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// compileLauncher compiles the embedded launcher once per source version
// into the emulator's directory and returns the class directory.
func compileLauncher(dir string) (string, error) {
	sum := sha256.Sum256(launcherSource)
	classes := filepath.Join(dir, "launcher-"+hex.EncodeToString(sum[:6]))
	if _, err := os.Stat(filepath.Join(classes, launcherClass+".class")); err == nil {
		return classes, nil
	}
	tmp, err := os.MkdirTemp(dir, "launcher-build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, launcherClass+".java")
	if err := os.WriteFile(src, launcherSource, 0o644); err != nil {
		return "", err
	}
	out, err := exec.Command("javac", "-d", filepath.Join(tmp, "classes"),
		"-cp", filepath.Join(dir, "DynamoDBLocal.jar")+string(os.PathListSeparator)+filepath.Join(dir, "DynamoDBLocal_lib", "*"),
		src).CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("compile DynamoDB Local launcher (is javac on PATH?): %w\n%s", err, out)
	}
	// Another process may have won the race; its classes are the same.
	if err := os.Rename(filepath.Join(tmp, "classes"), classes); err != nil && !errors.Is(err, os.ErrExist) {
		if _, statErr := os.Stat(filepath.Join(classes, launcherClass+".class")); statErr != nil {
			return "", err
		}
	}
	return classes, nil
}
