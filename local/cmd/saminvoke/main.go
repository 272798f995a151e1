// Command saminvoke replays an AppSync event with `sam local invoke` on the
// synthesized template (make sam-invoke EVENT=events/<file>.json): it starts
// DynamoDB Local with the sample data on the host, attaches the function's
// container to a user-defined Docker network (samenv.Network; SAM ignores
// --docker-network host), points the function at the host through that
// network's gateway (Docker Desktop's host.docker.internal on macOS), runs
// SAM, and fails when SAM printed that the container gave no response or
// the reply is not the function's answer to the event (SAM exits 0 for
// both). SAM pulls nothing when the image is there (--skip-pull-image) and
// sends no telemetry. It needs Docker and the SAM CLI; the template's
// architecture (make ... ARCH=x86_64) must be the host's, or one it
// emulates (qemu-user-static under binfmt): it says so before it starts.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/docker"
	"github.com/example/appsync-dynamo/local/samenv"
	"github.com/example/appsync-dynamo/local/sample"
)

func main() {
	template := flag.String("template", "cdk.out/AppSyncDynamo.template.json", "the synthesized template (make synth)")
	event := flag.String("event", "events/Query.post-with-comments.json", "the event to replay")
	envFile := flag.String("env-vars", ".build/sam-env.json", "where to write SAM's env-vars file")
	flag.Parse()
	if err := run(*template, *event, *envFile); err != nil {
		fmt.Fprintln(os.Stderr, "sam-invoke:", err)
		os.Exit(1)
	}
}

func run(template, event, envFile string) error {
	for _, tool := range []string{"sam", "docker"} {
		if _, err := exec.LookPath(tool); err != nil {
			return fmt.Errorf("%s is not installed (make sam-invoke needs Docker and the SAM CLI): see docs/local.md", tool)
		}
	}
	raw, err := os.ReadFile(template)
	if err != nil {
		return fmt.Errorf("%v: run make synth first", err)
	}
	fn, err := samenv.Find(raw)
	if err != nil {
		return err
	}
	binfmt := "/proc/sys/fs/binfmt_misc"
	if runtime.GOOS != "linux" {
		binfmt = "" // Docker Desktop emulates the other architecture itself
	}
	if err := samenv.CanRun(fn.Architecture, runtime.GOARCH, binfmt); err != nil {
		return err
	}
	payload, err := os.ReadFile(event)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	gateway, err := docker.Network(ctx, samenv.Network)
	if err != nil {
		return err
	}
	// On Linux, DynamoDB Local listens on the network's gateway, where the
	// container reaches the host; Docker Desktop (macOS) forwards
	// host.docker.internal to the host's loopback.
	bind := "127.0.0.1"
	if runtime.GOOS == "linux" {
		bind = gateway
	}
	db, err := ddblocal.StartInstalledOn(ctx, bind)
	if err != nil {
		return err
	}
	defer db.Stop()
	const table = "appsync-dynamo-sam"
	if err := ddblocal.Seed(ctx, db.Endpoint, table, sample.Data()); err != nil {
		return err
	}
	u, err := url.Parse(db.Endpoint)
	if err != nil {
		return err
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		return err
	}
	vars, err := samenv.EnvVars(fn, samenv.Local(samenv.HostEndpoint(runtime.GOOS, gateway, port), table))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(envFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(envFile, vars, 0o644); err != nil {
		return err
	}
	args := []string{"local", "invoke", "-t", template, fn.LogicalID, "-e", event, "--env-vars", envFile, "--docker-network", samenv.Network}
	if docker.HasImage(ctx, samenv.Image(fn.Architecture)) {
		args = append(args, "--skip-pull-image")
		fmt.Fprintf(os.Stderr, "sam-invoke: the provided.al2023 image for %s is here: SAM pulls nothing\n", fn.Architecture)
	} else {
		fmt.Fprintf(os.Stderr, "sam-invoke: SAM pulls the provided.al2023 image for %s first (once)\n", fn.Architecture)
	}
	var reply, logs bytes.Buffer
	quiet := &samenv.Quiet{W: os.Stderr}
	cmd := exec.CommandContext(ctx, "sam", args...)
	cmd.Stdout, cmd.Stderr = io.MultiWriter(os.Stdout, &reply), io.MultiWriter(quiet, &logs)
	// DynamoDB Local takes any credentials; SAM passes these into the
	// container. SAM asks STS who they are on every invoke: a closed local
	// port answers at once, where AWS's endpoint, offline, costs seconds.
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1",
		"AWS_ENDPOINT_URL_STS=http://127.0.0.1:9", "SAM_CLI_TELEMETRY=0")
	err = cmd.Run()
	quiet.Flush()
	if quiet.Dropped > 0 {
		fmt.Fprintf(os.Stderr, "sam-invoke: left out %d lines of SAM's %q (the stack's resources that are not functions)\n", quiet.Dropped, samenv.Noise)
	}
	if err != nil {
		return err
	}
	if strings.Contains(logs.String(), samenv.NoResponse) {
		return fmt.Errorf("SAM printed %q (and exited 0)", samenv.NoResponse)
	}
	return samenv.CheckReply(payload, reply.Bytes())
}
