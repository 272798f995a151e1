package rie

import (
	"slices"
	"testing"
)

// The emulator's output of a cold start and a warm invocation, as it
// prints them: the first REPORT's Duration counts the init (5.8 ms) too.
const output = `01 Dec 2026 16:28:25,990 [INFO] (rapid) INIT START(type: on-demand, phase: init)
01 Dec 2026 16:28:25,996 [INFO] (rapid) INIT REPORT(durationMs: 5.799000)
01 Dec 2026 16:28:25,996 [INFO] (rapid) INVOKE START(requestId: 7e3e36d7-d234-4603-a36f-92cbfe2f7dfe)
01 Dec 2026 16:28:26,004 [INFO] (rapid) INVOKE RTDONE(status: success, produced bytes: 0, duration: 8.246000ms)
END RequestId: 7e3e36d7-d234-4603-a36f-92cbfe2f7dfe
REPORT RequestId: 7e3e36d7-d234-4603-a36f-92cbfe2f7dfe	Init Duration: 0.38 ms	Duration: 13.95 ms	Billed Duration: 14 ms	Memory Size: 3008 MB	Max Memory Used: 3008 MB
01 Dec 2026 16:28:26,005 [INFO] (rapid) INVOKE START(requestId: e65b72d3-d6ff-461b-b7ea-23d3cce9d4ef)
01 Dec 2026 16:28:26,009 [INFO] (rapid) INVOKE RTDONE(status: success, produced bytes: 0, duration: 4.313000ms)
END RequestId: e65b72d3-d6ff-461b-b7ea-23d3cce9d4ef
REPORT RequestId: e65b72d3-d6ff-461b-b7ea-23d3cce9d4ef	Duration: 4.48 ms	Billed Duration: 5 ms	Memory Size: 3008 MB	Max Memory Used: 3008 MB
`

func TestAnInvocationsDurationLeavesTheInitOut(t *testing.T) {
	r := parseReport(output)
	if r.InitMs != 5.799 || !slices.Equal(r.InvokeMs, []float64{8.246, 4.313}) {
		t.Errorf("init %v ms, invocations %v ms; want 5.799 and [8.246 4.313]", r.InitMs, r.InvokeMs)
	}
}
