package main

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/cursor"
)

// TestLambdaHoldsTheFunctionAndOnlyIt checks the tree's promise: every
// package under lambda/ is part of what a main of lambda/cmd builds (the
// functions), and none imports a package of the project from outside
// lambda/ (the local tools never ship).
func TestLambdaHoldsTheFunctionAndOnlyIt(t *testing.T) {
	list := func(args ...string) []string {
		out, err := exec.Command("go", append([]string{"list"}, args...)...).Output()
		if err != nil {
			t.Fatalf("go list %v: %v", args, err)
		}
		return strings.Fields(string(out))
	}
	const module = "github.com/example/appsync-dynamo/"
	deps := list("-deps", "../...")
	for _, pkg := range list("../../...") {
		if !slices.Contains(deps, pkg) {
			t.Errorf("%s is under lambda/ but not part of a function", pkg)
		}
	}
	for _, pkg := range deps {
		if strings.HasPrefix(pkg, module) && !strings.HasPrefix(pkg, module+"lambda/") {
			t.Errorf("the function imports %s, from outside lambda/", pkg)
		}
	}
}

// The function links only the AWS clients it uses: no config package, and
// so none of the SSO, SSO-OIDC, STS, Sign-In and IMDS clients it brings for
// credential sources a Lambda function never uses, and no Secrets Manager
// client for its one call (package awsenv makes it); and no DynamoDB
// schemas, the models of every operation's shapes that the DynamoDB client
// builds at each start from v1.69.0, when it took to schema-based
// serialization (go.mod keeps it at v1.68.0: docs/benchmarks.md#cold-start),
// nor DynamoDB Streams' (the attributevalue package links its types; go.mod
// keeps it at v1.41.0, the last before its schemas).
func TestOnlyWhatTheFunctionUsesIsLinked(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "lambda.norpc", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, banned := range []string{"aws-sdk-go-v2/config", "aws-sdk-go-v2/credentials", "aws-sdk-go-v2/feature/ec2/imds",
			"service/sso", "service/ssooidc", "service/sts", "service/signin", "service/secretsmanager", "service/dynamodb/schemas",
			"service/dynamodbstreams/schemas"} {
			if strings.Contains(pkg, banned) {
				t.Errorf("the function links %s", pkg)
			}
		}
	}
}

func TestTokenKey(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	cases := []struct {
		vars    map[string]string
		want    string
		refused bool
	}{
		{map[string]string{}, cursor.DevelopmentKey, false},
		{map[string]string{"NEXT_TOKEN_KEY": "k"}, "k", false},
		{map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001"}, "", true},
		{map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "NEXT_TOKEN_KEY": cursor.DevelopmentKey}, "", true},
		{map[string]string{"AWS_LAMBDA_RUNTIME_API": "127.0.0.1:9001", "NEXT_TOKEN_KEY": "secret"}, "secret", false},
	}
	for _, c := range cases {
		key, err := tokenKey(env(c.vars))
		if key != c.want || (err != nil) != c.refused {
			t.Errorf("%v: key %q, error %v", c.vars, key, err)
		}
	}
}

// The bootstrap, built as make build builds it (linux/arm64, the Lambda
// flags), is at most 9 MB: what a new environment loads before its first
// request. The file grows by whole 64 kB segments: the log says how much
// code and data fit before each grows.
func TestTheBootstrapIsAtMost9MB(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the function for linux/arm64")
	}
	bin := filepath.Join(t.TempDir(), "bootstrap")
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", bin, ".")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	info, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > 9_000_000 {
		t.Errorf("the bootstrap is %d bytes, past 9 MB", info.Size())
	}
	t.Logf("bootstrap: %d bytes; room before a segment grows: %s", info.Size(), segmentRoom(t, bin))
}

// segmentRoom describes, for each loadable segment of the ELF file bin but
// the last, the bytes left between its end and the next segment's start.
func segmentRoom(t *testing.T, bin string) string {
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var loads []*elf.Prog
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD {
			loads = append(loads, p)
		}
	}
	var room []string
	for i := 0; i+1 < len(loads); i++ {
		p := loads[i]
		room = append(room, fmt.Sprintf("%s %d", p.Flags, loads[i+1].Off-(p.Off+p.Filesz)))
	}
	return strings.Join(room, ", ")
}
