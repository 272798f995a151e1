package samenv_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/samenv"
)

// SAM exits 0 when the container answered nothing or the function failed:
// the reply itself must be the function's answer to the event.
func TestCheckReply(t *testing.T) {
	batch := `[{"info":{}},{"info":{}},{"info":{}}]`
	for _, c := range []struct {
		name, event, reply string
		ok                 bool
	}{
		{"a batch answered", batch, `[{"data":1},{"data":null,"errorType":"NotFound","errorMessage":"x"},{"data":3}]`, true},
		{"a batch answered short", batch, `[{"data":1},{"data":2}]`, false},
		{"a batch answered by an error", batch, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, false},
		{"a batch answered by nothing", batch, ``, false},
		{"an event answered", `{"info":{}}`, `{"id":"p1","title":"t"}`, true},
		{"an event answered with a list", `{"info":{}}`, `[{"id":"p1"},null]`, true},
		{"an event answered with a field's error", `{"info":{}}`, `{"errorType":"NotFound","errorMessage":"no such post"}`, true},
		{"an event answered by the runtime's error", `{"info":{}}`, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, false},
		{"an event timed out", `{"info":{}}`, `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 10.00 seconds"}`, false},
		{"an event answered by nothing", `{"info":{}}`, ``, false},
	} {
		err := samenv.CheckReply([]byte(c.event), []byte(c.reply))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestHostEndpoint(t *testing.T) {
	if got := samenv.HostEndpoint("linux", "172.18.0.1", 8000); got != "http://172.18.0.1:8000" {
		t.Errorf("linux: %s", got)
	}
	if got := samenv.HostEndpoint("darwin", "172.18.0.1", 8000); got != "http://host.docker.internal:8000" {
		t.Errorf("darwin: %s", got)
	}
}

// An architecture the host cannot run is refused before SAM starts, with
// what to do; its own, or one binfmt emulates, is not.
func TestCanRun(t *testing.T) {
	none, emulated := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(emulated, "qemu-aarch64"), []byte("enabled\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		arch, host, binfmt string
		ok                 bool
	}{
		{"x86_64", "amd64", none, true},
		{"arm64", "arm64", none, true},
		{"arm64", "amd64", emulated, true},
		{"arm64", "amd64", "", true}, // no binfmt: Docker Desktop emulates
		{"arm64", "amd64", none, false},
		{"x86_64", "arm64", emulated, false},
		{"mips", "amd64", none, false},
	} {
		err := samenv.CanRun(c.arch, c.host, c.binfmt)
		if (err == nil) != c.ok {
			t.Errorf("%s on %s (binfmt %q): %v", c.arch, c.host, c.binfmt, err)
		}
		if err != nil && c.arch == "arm64" && !strings.Contains(err.Error(), "ARCH=x86_64") {
			t.Errorf("%s on %s: %q does not say ARCH=x86_64", c.arch, c.host, err)
		}
	}
}

// SAM's line for each resource it cannot map is left out, whatever the
// writes' boundaries, and counted; every other line passes whole.
func TestQuietLeavesOutSAMsNoise(t *testing.T) {
	in := "Invoking bootstrap\nCannot detect function id from resource TableA\n" + strings.Repeat("Cannot detect function id from resource X\n", 81) + "START RequestId: 1\n{\"data\":1}"
	for _, size := range []int{1, 7, 64, len(in)} {
		var out bytes.Buffer
		q := &samenv.Quiet{W: &out}
		for i := 0; i < len(in); i += size {
			q.Write([]byte(in[i:min(i+size, len(in))]))
		}
		q.Flush()
		if want := "Invoking bootstrap\nSTART RequestId: 1\n{\"data\":1}"; out.String() != want || q.Dropped != 82 {
			t.Errorf("writes of %d: %q, %d dropped; want %q, 82", size, out.String(), q.Dropped, want)
		}
	}
}
