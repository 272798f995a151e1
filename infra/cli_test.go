package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cli returns the pinned CDK CLI, which make test installs (CDK_CLI),
// failing the test when it is missing: never skipped.
func cli(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the CDK CLI, which make test installs: skipped under -short (make check)")
	}
	path := os.Getenv("CDK_CLI")
	if path == "" {
		t.Fatal("CDK_CLI is not set: run through make test, which installs the pinned CDK CLI")
	}
	return path
}

// workingTree copies the repository's working tree (its tracked files and
// those git does not ignore, as they are now: no .build/, no cdk.out/) into
// a new directory, as a fresh clone of it would be.
func workingTree(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		src := filepath.Join("..", name)
		info, err := os.Lstat(src)
		if os.IsNotExist(err) { // deleted, not yet committed
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, info.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// `cdk synth` as a user types it on a fresh clone, with the CDK CLI the
// project pins: it builds both functions itself and writes, byte for byte,
// the template make synth writes, for the default architecture and for
// -c arch=x86_64.
func TestCdkSynthAsTypedWritesMakeSynthsTemplate(t *testing.T) {
	cdk := cli(t)
	clone := workingTree(t)
	for _, c := range []struct{ makeArch, context string }{{"x86_64", "arch=x86_64"}, {"arm64", ""}} {
		mk := exec.Command("make", "-s", "synth", "ARCH="+c.makeArch)
		mk.Dir = ".."
		if out, err := mk.CombinedOutput(); err != nil {
			t.Fatalf("make synth ARCH=%s: %v\n%s", c.makeArch, err, out)
		}
		want, err := os.ReadFile("../cdk.out/AppSyncDynamo.template.json")
		if err != nil {
			t.Fatal(err)
		}
		args := []string{"synth", "--quiet"}
		if c.context != "" {
			args = append(args, "-c", c.context)
		}
		synth := exec.Command(cdk, args...)
		synth.Dir = clone
		if out, err := synth.CombinedOutput(); err != nil {
			t.Fatalf("cdk %v on a fresh clone: %v\n%s", args, err, out)
		}
		got, err := os.ReadFile(filepath.Join(clone, "cdk.out", "AppSyncDynamo.template.json"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("cdk %v on a fresh clone wrote another template than make synth ARCH=%s (%d bytes against %d)", args, c.makeArch, len(got), len(want))
		}
		if !regexp.MustCompile(`"Architectures": \[\s*"` + c.makeArch + `"`).Match(got) {
			t.Errorf("cdk %v: the template's functions are not %s", args, c.makeArch)
		}
	}
	for _, f := range functions {
		if _, err := os.Stat(filepath.Join(clone, f.dir, "bootstrap")); err != nil {
			t.Errorf("the fresh clone's %s: %v", f.dir, err)
		}
	}
}

// Each way `cdk synth` or `cdk deploy` cannot go on ends with a line saying
// what to do, never a stack trace: without Go on PATH, with a function that
// does not build, without AWS credentials, and in an account not
// bootstrapped for CDK (an AWS that answers who the caller is and finds no
// bootstrap version: fakeAWS).
func TestCdkSaysWhatToDo(t *testing.T) {
	cdk := cli(t)
	noGo := pathWithout(t, "go")
	aws := fakeAWS(t)
	doc, err := os.ReadFile("../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	clone := workingTree(t) // one for every case: the CDK app is linked once
	for _, c := range []struct {
		name, says string
		args, env  []string
		broken     bool
		notSays    string
	}{
		{"synth without Go on PATH", "cdk: this CDK app is Go: install Go 1.26 and put it on PATH",
			[]string{"synth", "--quiet"}, []string{"PATH=" + noGo}, false, ""},
		{"synth with a function that does not build", "cdk: ./lambda/cmd/projector does not build (",
			[]string{"synth", "--quiet"}, nil, true, ""},
		{"deploy without credentials", "cdk: no AWS credentials found: synth needs none; deploy and diff do (aws configure",
			[]string{"deploy", "--require-approval", "never"}, nil, false, ""},
		{"deploy to an account not bootstrapped", "Please run 'cdk bootstrap'",
			[]string{"deploy", "--require-approval", "never"},
			[]string{"AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE", "AWS_SECRET_ACCESS_KEY=example", "AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=" + aws}, false,
			"no AWS credentials found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.broken {
				broken := filepath.Join(clone, "lambda/cmd/projector/broken.go")
				if err := os.WriteFile(broken, []byte("package main\n\nfunc broken( {\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(broken)
			}
			run := exec.Command(cdk, c.args...)
			run.Dir, run.Env = clone, append(withoutAWS(t), c.env...)
			out, err := run.CombinedOutput()
			text := string(out)
			if err == nil || !strings.Contains(text, c.says) || strings.Contains(text, "goroutine") || strings.Contains(text, "panic") {
				t.Errorf("%v, want a failure saying %q and no stack trace:\n%s", err, c.says, text)
			}
			if said := strings.TrimPrefix(c.says, "cdk: ./lambda/cmd/projector"); !bytes.Contains(doc, []byte(said)) {
				t.Errorf("docs/deploying.md does not show the line %q", said)
			}
			if c.notSays != "" && strings.Contains(text, c.notSays) {
				t.Errorf("cdk %s says %q:\n%s", c.name, c.notSays, text)
			}
			t.Logf("cdk %s:\n%s", c.name, text)
		})
	}
}

// pathWithout is a directory to use as PATH holding what the CDK CLI needs
// (node, sh) and not the command left out.
func pathWithout(t *testing.T, left string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"node", "sh"} {
		p, err := exec.LookPath(name)
		if err != nil {
			t.Fatal(err)
		}
		if name == left {
			continue
		}
		if err := os.Symlink(p, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// withoutAWS is this process's environment with no AWS credentials,
// profile or configuration (a new, empty HOME; no instance metadata), and
// Go's caches where they are (not under the new HOME).
func withoutAWS(t *testing.T) []string {
	caches, err := exec.Command("go", "env", "GOCACHE", "GOMODCACHE", "GOPATH").Output()
	if err != nil {
		t.Fatal(err)
	}
	dirs := strings.Fields(string(caches))
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") && !strings.HasPrefix(kv, "CDK_DEFAULT_") {
			env = append(env, kv)
		}
	}
	return append(env, "HOME="+t.TempDir(), "AWS_EC2_METADATA_DISABLED=true",
		"GOCACHE="+dirs[0], "GOMODCACHE="+dirs[1], "GOPATH="+dirs[2])
}

// fakeAWS answers as an account that was never bootstrapped for CDK: STS
// says who the caller is, SSM finds no /cdk-bootstrap/... parameter, and
// everything else (the bootstrap roles, the assets bucket) is denied.
func fakeAWS(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case strings.Contains(string(body), "Action=GetCallerIdentity"):
			w.Header().Set("Content-Type", "text/xml")
			fmt.Fprint(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>`+
				`<Arn>arn:aws:iam::123456789012:user/dev</Arn><UserId>AIDAEXAMPLE</UserId><Account>123456789012</Account>`+
				`</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`)
		case strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".GetParameter"):
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusBadRequest)
			fmt.Fprint(w, `{"__type":"ParameterNotFound","message":"parameter not found"}`)
		default:
			w.Header().Set("Content-Type", "text/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<ErrorResponse><Error><Type>Sender</Type><Code>AccessDenied</Code><Message>denied</Message></Error><RequestId>1</RequestId></ErrorResponse>`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}
