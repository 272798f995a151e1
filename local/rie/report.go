package rie

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Report is what the emulator says of the function's start and its
// invocations, and the function process's peak memory.
type Report struct {
	InitMs      float64   // the runtime's init duration (INIT REPORT)
	InvokeMs    []float64 // each invocation's duration, in order (REPORT lines)
	PeakRSSKiB  int       // the function process's peak resident set (VmHWM)
	FunctionPID int
}

var (
	initReport   = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)
	invokeReport = regexp.MustCompile(`REPORT RequestId: \S+\s+(?:Init Duration: [0-9.]+ ms\s+)?Duration: ([0-9.]+) ms`)
)

// Report reads the emulator's output and the function process's memory
// (Linux only: /proc). Call it after the invocations to measure; it waits
// (up to two seconds) for the emulator to report each of them, which it
// does just after the reply.
func (e *Emulator) Report() (Report, error) {
	var r Report
	e.mu.Lock()
	calls := e.calls
	e.mu.Unlock()
	out := e.Output()
	for deadline := time.Now().Add(2 * time.Second); len(invokeReport.FindAllString(out, -1)) < calls && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		out = e.Output()
	}
	if m := initReport.FindStringSubmatch(out); m != nil {
		r.InitMs, _ = strconv.ParseFloat(m[1], 64)
	}
	for _, m := range invokeReport.FindAllStringSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(m[1], 64)
		r.InvokeMs = append(r.InvokeMs, ms)
	}
	pid, err := e.functionPID()
	if err != nil {
		return r, err
	}
	r.FunctionPID = pid
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return r, err
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			r.PeakRSSKiB, _ = strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
		}
	}
	if r.InitMs == 0 || r.PeakRSSKiB == 0 {
		return r, fmt.Errorf("rie: no init report or memory figure in %q", out)
	}
	return r, nil
}

// functionPID finds the function's process: the emulator's child (started
// by whichever of its threads).
func (e *Emulator) functionPID() (int, error) {
	pid := e.cmd.Process.Pid
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	if err != nil {
		return 0, err
	}
	for _, t := range tasks {
		children, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if fields := strings.Fields(string(children)); len(fields) > 0 {
			return strconv.Atoi(fields[0])
		}
	}
	return 0, fmt.Errorf("rie: the emulator (pid %d) has no child process", pid)
}
