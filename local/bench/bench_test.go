package bench_test

import (
	"bytes"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/golden"
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
	layoutsTableIsTrue(t, rows, "../../docs/benchmarks.md")
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

// layoutsTableIsTrue checks what docs/benchmarks.md's table of the four
// layouts counts against what they cost now: every column but the median
// latency (a measurement of one run), bench.Table's own cells.
func layoutsTableIsTrue(t *testing.T, rows []bench.Row, docPath string) {
	t.Helper()
	doc, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	counts := func(line string) string { // the cells after query and layout, latency left out
		cells := strings.Split(line, " | ")
		return strings.Join(cells[2:len(cells)-1], " | ")
	}
	docLines := map[string]string{}
	at := map[string]int{} // each row's line in lines
	lines := strings.Split(string(doc), "\n")
	var last string
	for i, line := range lines {
		cells := strings.Split(line, " | ")
		key := last + " ratio"
		switch {
		case len(cells) < 8:
			continue
		case cells[0] != "| " && cells[0] != "|":
			last = strings.TrimPrefix(cells[0], "| ")
			key = last + " " + cells[1]
		}
		docLines[key], at[key] = counts(line), i
	}
	last = ""
	for _, line := range strings.Split(bench.Table(rows), "\n")[2:] {
		cells := strings.Split(line, " | ")
		if len(cells) < 8 {
			continue
		}
		key := last + " ratio"
		if cells[0] != "| " && cells[0] != "|" {
			last = strings.TrimPrefix(cells[0], "| ")
			key = last + " " + cells[1]
		}
		if got, said := counts(line), docLines[key]; got != said {
			if *updateWrites && said != "" {
				lines[at[key]] = strings.Replace(lines[at[key]], " | "+said+" | ", " | "+got+" | ", 1) // its counts, its latency as make bench measured it
				continue
			}
			t.Errorf("%s, %s: the layouts cost %q; %s says %q (make bench prints the table; go test ./local/bench -run EarlyReturnBeats -update rewrites its counts)", last, cells[1], got, docPath, said)
		}
	}
	if *updateWrites {
		if err := os.WriteFile(docPath, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// docs/dollars.svg is the chart of the dollars table in docs/benchmarks.md
// (make bench writes both from one run): the chart drawn from the table's
// figures is the file.
func TestTheDollarsChartDrawsTheDocumentsTable(t *testing.T) {
	doc, err := os.ReadFile("../../docs/benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	var queries []bench.Priced
	for _, name := range bench.ChartedQueries {
		q := bench.Priced{Query: name}
		for _, layout := range bench.Layouts {
			prefix := "| " + name + " | " + layout + " | "
			var line string
			for l := range strings.SplitSeq(string(doc), "\n") {
				if strings.HasPrefix(l, prefix) {
					line = l
				}
			}
			cells := strings.Split(strings.Trim(line, "| "), " | ")
			if len(cells) != 7 {
				t.Fatalf("docs/benchmarks.md has no dollars row %q", prefix)
			}
			num := func(cell string) float64 {
				v, err := strconv.ParseFloat(strings.Fields(cell)[0], 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				return v
			}
			d := bench.Dollars{AppSync: num(cells[2]), LambdaRequests: num(cells[3]), LambdaDuration: num(cells[4]), DynamoDB: num(cells[5])}
			if total := num(cells[6]); math.Abs(d.Total()-total) > 0.011 {
				t.Errorf("%s: the services add up to %.2f, the row says %.2f", prefix, d.Total(), total)
			}
			q.Layouts, q.Totals = append(q.Layouts, d), append(q.Totals, num(cells[6]))
		}
		queries = append(queries, q)
	}
	var chart bytes.Buffer
	bench.DollarsChart(&chart, queries)
	golden.File(t, "../../docs/dollars.svg", chart.Bytes(), *updateWrites, "go test ./local/bench -run TestTheDollarsChartDrawsTheDocumentsTable -update")
}
