package bench_test

import (
	"os"
	"regexp"
	"strconv"
	"testing"

	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The project's claims, checked on every run: the early-return layout
// resolves each query in one Lambda invocation and at most as many DynamoDB
// requests and round trips as the batched layout (the seed's DataLoader
// layout), which itself beats the naive one on the nested queries.
func TestEarlyReturnBeatsTheOtherLayouts(t *testing.T) {
	rows, err := bench.Run(t.Context(), storetest.Endpoint(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + bench.Table(rows))
	for _, r := range rows {
		now, old := r.EarlyReturn(), r.Batched()
		if now.Invocations != 1 {
			t.Errorf("%s: %d invocations, want 1", r.Query.Name, now.Invocations)
		}
		if now.Invocations > old.Invocations || now.Requests > old.Requests || now.RoundTrips > old.RoundTrips {
			t.Errorf("%s: early return %+v costs more than batched %+v", r.Query.Name, now, old)
		}
	}
	for _, r := range rows[:2] {
		if r.Naive().Requests < 3*r.Batched().Requests {
			t.Errorf("%s: batched %d DynamoDB requests vs %d naive: want at least 3x fewer", r.Query.Name, r.Batched().Requests, r.Naive().Requests)
		}
	}
}

// The dollars' Lambda memory is the stack's (infra/apistack.MemoryMB, in a
// module of its own, which this one does not import).
func TestTheDollarsUseTheStacksMemory(t *testing.T) {
	src, err := os.ReadFile("../../infra/apistack/stack.go")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*MemoryMB\s*=\s*(\d+)`).FindSubmatch(src)
	if m == nil {
		t.Fatal("no MemoryMB constant in infra/apistack/stack.go")
	}
	if string(m[1]) != strconv.Itoa(bench.LambdaMemoryMB) {
		t.Errorf("the stack gives the function %s MB, the dollars count %d", m[1], bench.LambdaMemoryMB)
	}
}

func TestNiceCeiling(t *testing.T) {
	for v, want := range map[float64]float64{212.37: 240, 13.58: 16, 7.66: 8, 0.5: 0.6, 400: 400} {
		if got := bench.NiceCeiling(v); got != want {
			t.Errorf("NiceCeiling(%v) = %v, want %v", v, got, want)
		}
	}
}
