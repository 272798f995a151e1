package main

// Building what the stack's assets hold, every function, as make build
// builds them (the resolver, the projector, the deployment's probe), so that `cdk synth` and `cdk deploy` typed as they are find
// their assets and write the template make synth writes.

import (
	"github.com/example/appsync-dynamo/infra/bootstrap"
)

// functions are the Go functions the stack deploys: the command built, and
// the directory of its bootstrap (the asset), from the repository's root.
var functions = []struct{ cmd, dir string }{
	{"./lambda/cmd/resolver", ".build/resolver"},
	{"./lambda/cmd/projector", ".build/projector"}, // feature: projector
	{"./lambda/cmd/probe", ".build/probe"},         // feature: probe
}

// buildFunctions builds each function's bootstrap for arch, from the
// repository's root (where cdk.json runs the app), and returns one line
// saying what to do when it cannot (infra/app.sh, which built this
// program, has checked that Go is on PATH).
func buildFunctions(arch string) error {
	for _, f := range functions {
		if err := bootstrap.Build(".", f.cmd, f.dir, arch); err != nil {
			return err
		}
	}
	return nil
}
