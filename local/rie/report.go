package rie

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	// The emulator's REPORT of the first invocation counts the init in its
	// Duration (Lambda's does not: it reports Init Duration apart), so an
	// invocation's own duration is its INVOKE RTDONE's.
	invokeDone = regexp.MustCompile(`INVOKE RTDONE\([^)]*duration: ([0-9.]+)ms\)`)
)

// parseReport reads the init and invocation durations in the emulator's
// output.
func parseReport(out string) Report {
	var r Report
	if m := initReport.FindStringSubmatch(out); m != nil {
		r.InitMs, _ = strconv.ParseFloat(m[1], 64)
	}
	for _, m := range invokeDone.FindAllStringSubmatch(out, -1) {
		ms, _ := strconv.ParseFloat(m[1], 64)
		r.InvokeMs = append(r.InvokeMs, ms)
	}
	return r
}

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
	r = parseReport(out)
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

// Summarize describes runs of the same function, each a new environment:
// the median and the range of its init, first and second invocation and
// peak RSS, the first invocation as a multiple of the second (a warm one),
// median of the runs' own ratios, and init plus the first invocation (what
// the first request of a new environment waits for, less the runtime's
// start), median of the runs' own sums.
func Summarize(runs []Report) string {
	pick := func(f func(Report) float64) []float64 {
		v := make([]float64, len(runs))
		for i, r := range runs {
			v[i] = f(r)
		}
		return v
	}
	spread := func(v []float64, unit string, decimals int) string {
		v = slices.Sorted(slices.Values(v))
		if len(v) == 0 {
			return "none"
		}
		return fmt.Sprintf("%.*f %s (%.*f-%.*f)", decimals, Median(v), unit, decimals, v[0], decimals, v[len(v)-1])
	}
	return fmt.Sprintf("%d runs: init %s, first invocation %s, second %s, first/second %s, init+first %s, peak RSS %s",
		len(runs),
		spread(pick(func(r Report) float64 { return r.InitMs }), "ms", 1),
		spread(pick(func(r Report) float64 { return r.InvokeMs[0] }), "ms", 1),
		spread(pick(func(r Report) float64 { return r.InvokeMs[1] }), "ms", 1),
		spread(pick(func(r Report) float64 { return r.InvokeMs[0] / r.InvokeMs[1] }), "x", 2),
		spread(pick(func(r Report) float64 { return r.InitMs + r.InvokeMs[0] }), "ms", 1),
		spread(pick(func(r Report) float64 { return float64(r.PeakRSSKiB) }), "KiB", 0))
}

// Median is the median of sorted values (the mean of the middle two for an
// even count).
func Median(sorted []float64) float64 {
	n := len(sorted)
	if n%2 == 1 {
		return sorted[n/2]
	}
	return (sorted[n/2-1] + sorted[n/2]) / 2
}
