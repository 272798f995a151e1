// Package nodebaseline measures the per-event cost's baseline: the
// traffic's fields (local/traffic) resolved by a Node function written with
// Powertools for AWS Lambda (TypeScript) that does the same work as the Go
// handler without answers (resolver.mjs), on the same payload bytes, in the
// same run as the Go benchmark. The packages it loads are locked in
// package-lock.json; make installs them into a cache and names their
// node_modules directory in NODE_BASELINE_MODULES.
package nodebaseline

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/traffic"
)

var (
	//go:embed resolver.mjs
	resolverJS []byte
	//go:embed bench.mjs
	benchJS []byte
	//go:embed e2e.mjs
	e2eJS []byte
)

// ModulesEnv names the environment variable holding the node_modules
// directory of the locked packages.
const ModulesEnv = "NODE_BASELINE_MODULES"

// Result is one case resolved in Node.
type Result struct {
	Name    string          `json:"name"`
	NsPerOp float64         `json:"nsPerOp"` // one payload parsed, resolved and serialized
	Reply   json.RawMessage `json:"reply"`
}

// Run resolves each case's payload in one Node process, with the traffic's
// users and Post(0) in memory: for measure/2 to warm up, then for at least
// measure (at least once), and returns the time per payload and the reply
// of each case.
func Run(ctx context.Context, cases []traffic.Case, measure time.Duration) ([]Result, error) {
	dir, err := os.MkdirTemp("", "nodebaseline-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := link(dir); err != nil {
		return nil, err
	}
	data := struct {
		Users []store.User `json:"users"`
		Posts []store.Post `json:"posts"`
		Cases []struct {
			Name string `json:"name"`
			File string `json:"file"`
		} `json:"cases"`
	}{Users: traffic.Users(), Posts: []store.Post{traffic.Post(0)}}
	files := map[string][]byte{}
	for i, c := range cases {
		file := fmt.Sprintf("case-%d.json", i)
		files[file] = c.Payload
		data.Cases = append(data.Cases, struct {
			Name string `json:"name"`
			File string `json:"file"`
		}{c.Name, file})
	}
	if files["data.json"], err = json.Marshal(data); err != nil {
		return nil, err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "node", "bench.mjs", dir, fmt.Sprint(measure.Milliseconds()))
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("node bench.mjs: %w\n%s", err, stderr.Bytes())
	}
	var results []Result
	if err := json.Unmarshal(stdout.Bytes(), &results); err != nil {
		return nil, fmt.Errorf("node bench.mjs wrote %.200q: %w", stdout.Bytes(), err)
	}
	if len(results) != len(cases) {
		return nil, fmt.Errorf("node bench.mjs resolved %d cases of %d", len(results), len(cases))
	}
	return results, nil
}

// link makes dir a place to run the scripts: the scripts, and the locked
// packages as node_modules.
func link(dir string) error {
	modules := os.Getenv(ModulesEnv)
	if modules == "" {
		return errors.New(ModulesEnv + " is not set: make test and make bench install the Node packages and set it")
	}
	for _, pkg := range []string{"@aws-lambda-powertools/event-handler", "@aws-sdk/client-dynamodb"} {
		if _, err := os.Stat(filepath.Join(modules, pkg)); err != nil {
			return fmt.Errorf("%s: %w", ModulesEnv, err)
		}
	}
	for name, b := range map[string][]byte{"resolver.mjs": resolverJS, "bench.mjs": benchJS, "e2e.mjs": e2eJS} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	return os.Symlink(modules, filepath.Join(dir, "node_modules"))
}
