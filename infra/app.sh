#!/bin/sh
# The CDK app as cdk.json runs it, from the repository's root: build it (a Go
# program in infra/, a module of its own) and run it, which builds both
# functions' bootstraps and synthesizes the stack. Each way it cannot ends
# with one line saying what to do.
command -v go >/dev/null 2>&1 || { echo "cdk: this CDK app is Go: install Go 1.26 and put it on PATH" >&2; exit 1; }
out=$(go build -C infra -o ../.build/cdk-app . 2>&1) || {
	echo "cdk: the CDK app in infra/ does not build: $(printf '%s\n' "$out" | head -n 1)" >&2
	exit 1
}
exec .build/cdk-app
