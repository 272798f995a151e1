// Command saminvoke replays an AppSync event with `sam local invoke` on the
// synthesized template (make sam-invoke EVENT=events/<file>.json): it starts
// DynamoDB Local with the sample data, writes the env-vars file that points
// the function at it, runs SAM on the host's network (so the container
// reaches 127.0.0.1) and stops DynamoDB Local. It needs Docker and the SAM
// CLI; on an x86_64 host the arm64 function runs under emulation (qemu's
// binfmt handlers) unless the template is synthesized for x86_64.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"

	"github.com/example/appsync-dynamo/local/ddblocal"
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
	if _, err := exec.LookPath("sam"); err != nil {
		return fmt.Errorf("the SAM CLI is not installed (and needs Docker): see docs/local.md")
	}
	raw, err := os.ReadFile(template)
	if err != nil {
		return fmt.Errorf("%v: run make synth first", err)
	}
	fn, err := samenv.Find(raw)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	db, err := ddblocal.StartInstalled(ctx)
	if err != nil {
		return err
	}
	defer db.Stop()
	const table = "appsync-dynamo-sam"
	if err := ddblocal.Seed(ctx, db.Endpoint, table, sample.Data()); err != nil {
		return err
	}
	vars, err := samenv.EnvVars(fn, samenv.Local(db.Endpoint, table))
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(envFile), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(envFile, vars, 0o644); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "sam", "local", "invoke", "-t", template, fn.LogicalID, "-e", event,
		"--env-vars", envFile, "--docker-network", "host")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	// DynamoDB Local takes any credentials; SAM passes these into the container.
	cmd.Env = append(os.Environ(), "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "AWS_DEFAULT_REGION=us-east-1")
	return cmd.Run()
}
