package samenv

// What this host can run, and what of SAM's output helps.

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// goarch is the Go name of a Lambda architecture.
var goarch = map[string]string{"arm64": "arm64", "x86_64": "amd64"}

// qemu is the binfmt_misc handler that lets a Linux host run a foreign
// architecture's binaries (Debian's qemu-user-static registers them).
var qemu = map[string]string{"arm64": "qemu-aarch64", "x86_64": "qemu-x86_64"}

// CanRun returns nil when a host of Go architecture host (runtime.GOARCH)
// can run a container of the Lambda architecture arch: its own, or a
// foreign one whose emulator is registered under binfmt (the directory
// /proc/sys/fs/binfmt_misc, "" for a host without it, such as Docker
// Desktop's, which emulates by itself). Otherwise it says what to do.
func CanRun(arch, host, binfmt string) error {
	want, ok := goarch[arch]
	switch {
	case !ok:
		return fmt.Errorf("the template's function is for %q, which is neither arm64 nor x86_64", arch)
	case want == host || binfmt == "":
		return nil
	}
	if _, err := os.Stat(filepath.Join(binfmt, qemu[arch])); err == nil {
		return nil
	}
	own := map[string]string{"arm64": "arm64", "amd64": "x86_64"}[host]
	return fmt.Errorf("the template's function is %s and this %s host has no emulator for it (%s not registered in %s): "+
		"run make sam-invoke ARCH=%s, or install qemu-user-static (apt-get install qemu-user-static binfmt-support)",
		arch, own, qemu[arch], binfmt, own)
}

// Noise is a line SAM prints for every resource of a CDK template it
// cannot map to a function (82 lines for this stack), which says nothing
// about the invocation.
var Noise = []byte("Cannot detect function id")

// Quiet is a writer that passes lines to W but those holding Noise, and
// counts them.
type Quiet struct {
	W       io.Writer
	mu      sync.Mutex
	partial []byte
	Dropped int
}

func (q *Quiet) Write(p []byte) (int, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.partial = append(q.partial, p...)
	for {
		i := bytes.IndexByte(q.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := q.partial[:i+1]
		if bytes.Contains(line, Noise) {
			q.Dropped++
		} else if _, err := q.W.Write(line); err != nil {
			return len(p), err
		}
		q.partial = q.partial[i+1:]
	}
}

// Flush writes what is left of a last line without its newline.
func (q *Quiet) Flush() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.partial) == 0 || bytes.Contains(q.partial, Noise) {
		q.partial = nil
		return nil
	}
	_, err := q.W.Write(q.partial)
	q.partial = nil
	return err
}
