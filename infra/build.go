package main

// Building what the stack's assets hold, both functions, as make build
// builds them, so that `cdk synth` and `cdk deploy` typed as they are find
// their assets and write the template make synth writes.

import (
	"fmt"
	"os/exec"

	"github.com/example/appsync-dynamo/infra/bootstrap"
)

// functions are the Go functions the stack deploys: the command built, and
// the directory of its bootstrap (the asset), from the repository's root.
var functions = []struct{ cmd, dir string }{
	{"./lambda/cmd/resolver", ".build/resolver"},
	{"./lambda/cmd/projector", ".build/projector"},
}

// buildFunctions builds each function's bootstrap for arch, from the
// repository's root (where cdk.json runs the app), and returns one line
// saying what to do when it cannot.
func buildFunctions(arch string) error {
	if _, err := exec.LookPath("go"); err != nil {
		return fmt.Errorf("the functions are Go: install Go 1.26 and put it on PATH")
	}
	for _, f := range functions {
		if err := bootstrap.Build(".", f.cmd, f.dir, arch); err != nil {
			return err
		}
	}
	return nil
}
