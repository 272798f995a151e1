// Package proc holds what the local harnesses share about the processes they
// run: a free port on loopback and a log buffer that a process writes while
// the harness reads it.
package proc

import (
	"bytes"
	"net"
	"sync"
)

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Output is a buffer safe for concurrent use: exec copies a process's stdout
// and stderr into it from goroutines of its own while the harness reads it.
type Output struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.Write(p)
}

// String returns what was written so far.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.buf.String()
}
