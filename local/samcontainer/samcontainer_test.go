//go:build samcontainer

// Package samcontainer tests what make sam-invoke does, as far as this
// machine allows without the SAM CLI: the function runs in a container the
// way SAM runs a provided.al2023 function (the Runtime Interface Emulator,
// mounted at /var/rapid, as entrypoint; the bootstrap mounted read-only at
// /var/task; the container created, connected to the user-defined network,
// then started), reaches DynamoDB Local on the host through that network's
// gateway, and answers every read event as the same bootstrap does under
// the emulator on the host (make invoke). Nothing is pulled: the image is
// imported from a root file system of empty directories (the bootstrap and
// the emulator are static binaries). It needs a Docker engine: make
// sam-container installs and starts Debian's where there is none.
package samcontainer

import (
	"archive/tar"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/docker"
	"github.com/example/appsync-dynamo/local/rie"
	"github.com/example/appsync-dynamo/local/samenv"
	"github.com/example/appsync-dynamo/local/sample"
)

const (
	image   = "appsync-dynamo-provided-test:local"
	network = samenv.Network + "-test"
	table   = "appsync-dynamo-sam"
)

func TestEventsInSAMsContainerAnswerAsMakeInvoke(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	if _, err := docker.Run(ctx, "info"); err != nil {
		t.Fatalf("no Docker engine (make sam-container starts one): %v", err)
	}
	emulator, err := rie.Binary()
	if err != nil {
		t.Fatal(err)
	}
	if exe, err := elf.Open(emulator); err != nil {
		t.Fatal(err)
	} else {
		for _, p := range exe.Progs {
			if p.Type == elf.PT_INTERP {
				t.Fatalf("the emulator %s is linked dynamically, and the image has no C library (make rie builds it static)", emulator)
			}
		}
		exe.Close()
	}

	// The bootstrap as make build builds it, for this machine's architecture.
	task, rapid := t.TempDir(), t.TempDir()
	build := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", filepath.Join(task, "bootstrap"), "./lambda/cmd/resolver")
	build.Dir = "../.."
	build.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+runtime.GOARCH, "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	copyFile(t, emulator, filepath.Join(rapid, "aws-lambda-rie"))
	importImage(ctx, t)

	// DynamoDB Local on the host, bound to the network's gateway: where the
	// container reaches it, and the host's emulator too.
	gateway, err := docker.Network(ctx, network)
	if err != nil {
		t.Fatal(err)
	}
	db, err := ddblocal.StartInstalledOn(ctx, gateway)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Stop()
	if err := ddblocal.Seed(ctx, db.Endpoint, table, sample.Data()); err != nil {
		t.Fatal(err)
	}
	vars := samenv.Local(db.Endpoint, table)
	vars["AWS_REGION"], vars["AWS_ACCESS_KEY_ID"], vars["AWS_SECRET_ACCESS_KEY"] = "us-east-1", "local", "local"

	// As SAM does: create (on the default bridge), connect to the network, start.
	name := fmt.Sprintf("appsync-dynamo-sam-test-%d", os.Getpid())
	args := []string{"create", "--name", name, "-p", "127.0.0.1::8080", "-v", task + ":/var/task:ro", "-v", rapid + ":/var/rapid:ro",
		"--entrypoint", "/var/rapid/aws-lambda-rie", "-w", "/var/task"}
	for k, v := range vars {
		args = append(args, "-e", k+"="+v)
	}
	if _, err := docker.Run(ctx, append(args, image, "/var/task/bootstrap")...); err != nil {
		t.Fatal(err)
	}
	defer docker.Run(context.Background(), "rm", "-f", name)
	if _, err := docker.Run(ctx, "network", "connect", network, name); err != nil {
		t.Fatal(err)
	}
	if _, err := docker.Run(ctx, "start", name); err != nil {
		t.Fatal(err)
	}
	hostPort, err := docker.Run(ctx, "port", name, "8080/tcp")
	if err != nil {
		t.Fatal(err)
	}
	container := "http://" + strings.Split(hostPort, "\n")[0] + "/2015-03-31/functions/function/invocations"

	// The same bootstrap under the emulator on the host, on the same table.
	var env []string
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	emu, err := rie.Start(ctx, emulator, filepath.Join(task, "bootstrap"), env)
	if err != nil {
		t.Fatal(err)
	}
	defer emu.Stop()

	events, err := filepath.Glob("../../events/*.json")
	if err != nil {
		t.Fatal(err)
	}
	features, err := filepath.Glob("../../lambda/*/events/*.json") // the wired features' (the bootstrap serves them)
	if err != nil {
		t.Fatal(err)
	}
	events = append(events, features...)
	replayed := 0
	for _, file := range events {
		if strings.HasPrefix(filepath.Base(file), "Mutation.") {
			continue // writes: a second run would answer otherwise
		}
		payload, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := post(ctx, container, payload)
		if err != nil {
			logs, _ := docker.Run(context.Background(), "logs", name)
			t.Fatalf("%s in the container: %v\n%s", file, err, logs)
		}
		want, err := emu.Invoke(ctx, payload)
		if err != nil {
			t.Fatal(err)
		}
		if err := samenv.CheckReply(payload, got); err != nil {
			t.Errorf("%s: %v", file, err)
		}
		if !bytes.Equal(compact(t, got), compact(t, want)) {
			t.Errorf("%s: the container answered\n%s\nmake invoke's emulator\n%s", file, got, want)
		}
		// The same unreachable endpoint would fail both alike: no read event's
		// answer holds either of these (the golden replies of events/ hold none).
		if strings.Contains(string(got), `"errorType":"InternalError"`) || strings.Contains(string(got), `"errorType":"Throttled"`) {
			t.Errorf("%s: the container's function did not reach DynamoDB Local: %s", file, got)
		}
		replayed++
	}
	if replayed < 20 {
		t.Fatalf("%d events replayed", replayed)
	}
	t.Logf("%d events answered alike in the container (network %s, DynamoDB Local at %s) and under the host's emulator", replayed, network, vars["AWS_ENDPOINT_URL_DYNAMODB"])
}

// importImage imports the image: the directories a provided.al2023
// function needs, and nothing else.
func importImage(ctx context.Context, t *testing.T) {
	var rootfs bytes.Buffer
	tw := tar.NewWriter(&rootfs)
	for _, dir := range []string{"tmp/", "var/", "var/task/", "var/rapid/", "etc/"} {
		mode := int64(0o755)
		if dir == "tmp/" {
			mode = 0o1777
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir, Mode: mode}); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "docker", "import", "-", image)
	cmd.Stdin = &rootfs
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("docker import: %v\n%s", err, out)
	}
}

func post(ctx context.Context, endpoint string, payload []byte) ([]byte, error) {
	var last error
	for range 50 { // until the emulator listens
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(payload))
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			defer resp.Body.Close()
			return io.ReadAll(resp.Body)
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	return nil, last
}

func compact(t *testing.T, b []byte) []byte {
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %v: %s", err, b)
	}
	return out.Bytes()
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}
