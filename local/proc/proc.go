// Package proc holds what the local harnesses share about the processes they
// run: a free port on loopback and a log buffer that a process writes while
// the harness reads it.
package proc

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
)

// FreePort returns a TCP port of 127.0.0.1 that was free a moment ago,
// below Linux's ephemeral range (32768 and up): the port is handed to a
// process that binds it later (the emulator binds its runtime API only at
// the first invocation), and a port of the ephemeral range may be taken
// meanwhile by any connection or listener on port 0 (a test server, a
// client's source port), where one below it is taken only by an explicit
// bind.
func FreePort() (int, error) {
	for range 100 {
		port := 20000 + rand.IntN(12000)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			continue // in use: another
		}
		l.Close()
		return port, nil
	}
	return 0, errors.New("proc: no free port in 20000-31999 after 100 tries")
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
