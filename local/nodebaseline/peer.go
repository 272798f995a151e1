package nodebaseline

// The end-to-end peer: a Node process that resolves payloads against
// DynamoDB, as a Lambda function written with Powertools and the AWS SDK
// would (e2e.mjs), driven call by call so that a benchmark can interleave
// it with the Go function's calls.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// Peer is a running e2e.mjs.
type Peer struct {
	dir  string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	errs *os.File
}

// StartPeer starts the peer on the DynamoDB at endpoint, reading table.
func StartPeer(ctx context.Context, endpoint, table string) (*Peer, error) {
	dir, err := os.MkdirTemp("", "nodebaseline-e2e-")
	if err != nil {
		return nil, err
	}
	if err := link(dir); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	errs, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "node", "e2e.mjs", dir, endpoint, table)
	cmd.Dir, cmd.Stderr = dir, errs
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("node e2e.mjs: %w", err)
	}
	return &Peer{dir: dir, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), errs: errs}, nil
}

// Resolve has the peer resolve payload n times, one after another, and
// returns each call's time (payload parsed, resolved, reply serialized)
// and the last reply.
func (p *Peer) Resolve(payload []byte, n int) ([]time.Duration, json.RawMessage, error) {
	file := "payload.json"
	if err := os.WriteFile(filepath.Join(p.dir, file), payload, 0o644); err != nil {
		return nil, nil, err
	}
	if _, err := fmt.Fprintf(p.in, "%s %d\n", file, n); err != nil {
		return nil, nil, p.failed(err)
	}
	line, err := p.out.ReadBytes('\n')
	if err != nil {
		return nil, nil, p.failed(err)
	}
	var got struct {
		NS    []int64         `json:"ns"`
		Reply json.RawMessage `json:"reply"`
	}
	if err := json.Unmarshal(line, &got); err != nil {
		return nil, nil, fmt.Errorf("e2e.mjs wrote %.200q: %w", line, err)
	}
	took := make([]time.Duration, len(got.NS))
	for i, ns := range got.NS {
		took[i] = time.Duration(ns)
	}
	return took, got.Reply, nil
}

func (p *Peer) failed(err error) error {
	msg, _ := os.ReadFile(p.errs.Name())
	return fmt.Errorf("node e2e.mjs: %w\n%s", err, msg)
}

// Close ends the peer.
func (p *Peer) Close() error {
	p.in.Close()
	err := p.cmd.Wait()
	p.errs.Close()
	os.RemoveAll(p.dir)
	return err
}
