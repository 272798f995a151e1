package resolver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// golden is what a replayed event produced: the reply or the error AppSync
// would show, and the DynamoDB requests it cost.
type golden struct {
	Response json.RawMessage `json:"response,omitempty"`
	Error    *struct {
		ErrorType    string `json:"errorType"`
		ErrorMessage string `json:"errorMessage"`
	} `json:"error,omitempty"`
	DynamoDB map[string]int `json:"dynamodb"`
}

// TestReplayEvents replays every events/*.json, and every event of a wired
// feature (lambda/<name>/events/*.json), through the handler, each
// against a fresh table loaded with the sample data (with a fixed clock and
// ID sequence, so writes are reproducible), and compares the result with
// testdata/golden/<name>.json (a feature's: its events/golden/<name>.json);
// and again through the handler reading
// selections as the first occurrence's (the safe reading), whose replies
// and requests are in testdata/golden/first-occurrence/<name>.json where
// they differ, and must be the same where no such file is.
// Run `go test ./lambda/resolver -run TestReplayEvents -update` to rewrite the
// golden files after a deliberate change, and review the diff.
func TestReplayEvents(t *testing.T) {
	files, features := eventFiles(t)
	for _, file := range append(files, features...) {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		goldens := filepath.Join("testdata", "golden")
		if slices.Contains(features, file) {
			goldens = filepath.Join(filepath.Dir(file), "golden")
		}
		t.Run(name, func(t *testing.T) {
			every := filepath.Join(goldens, name+".json")
			got := replay(t, file, appsync.EveryOccurrence)
			checkGolden(t, file, every, got, nil)
			first := filepath.Join(goldens, "first-occurrence", name+".json")
			checkGolden(t, file, first, replay(t, file, appsync.FirstOccurrence), got)
		})
	}
}

// replay runs the event in file through a handler reading selections under
// r, over a fresh table, and returns what it produced as a golden file holds
// it.
func replay(t *testing.T, file string, r appsync.Reading) []byte {
	t.Helper()
	h := readingHandler(t, r, sample.Data(), storetest.Deterministic(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))...)
	payload, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out, ierr, m := invoke(t, h, payload)
	var g golden
	if ierr != nil {
		g.Error = &struct {
			ErrorType    string `json:"errorType"`
			ErrorMessage string `json:"errorMessage"`
		}{ierr.Type, ierr.Message}
	} else {
		g.Response = out
	}
	g.DynamoDB = m.Summary().Requests
	got, err := json.MarshalIndent(g, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(got, '\n')
}

// checkGolden compares got with the golden file at path, or, with -update,
// writes it there. When same is given (the every-occurrence reply), a reply
// equal to it has no golden file of its own: -update removes one, and
// without -update a missing file means got must equal same.
func checkGolden(t *testing.T, file, path string, got, same []byte) {
	t.Helper()
	if *update {
		if same != nil && bytes.Equal(got, same) {
			if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			return
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	switch {
	case os.IsNotExist(err) && same != nil:
		want, path = same, "the every-occurrence reply (no "+path+")"
	case err != nil:
		t.Fatalf("no golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("replay of %s differs from %s (- golden, + got; after a deliberate change, go test ./lambda/resolver -run TestReplayEvents -update rewrites it):\n%s", file, path, lineDiff(string(want), string(got)))
	}
}

// lineDiff returns the lines that differ between a and b, "-" for a's and
// "+" for b's, with two lines of context around each change ("..." where
// lines are left out): the longest common subsequence of their lines.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1) // lcs[i][j]: of x[i:] and y[j:]
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	type line struct {
		mark byte
		text string
	}
	var lines []line
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			lines = append(lines, line{' ', x[i]})
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			lines = append(lines, line{'-', x[i]})
			i++
		default:
			lines = append(lines, line{'+', y[j]})
			j++
		}
	}
	var out strings.Builder
	skipped := false
	for k, l := range lines {
		near := false
		for d := max(k-2, 0); d <= min(k+2, len(lines)-1); d++ {
			near = near || lines[d].mark != ' '
		}
		if !near {
			if !skipped {
				out.WriteString("...\n")
			}
			skipped = true
			continue
		}
		skipped = false
		out.WriteString(string(l.mark) + " " + l.text + "\n")
	}
	return out.String()
}

func TestLineDiff(t *testing.T) {
	got := lineDiff("a\nb\nc\nd\ne\nf\ng\nh\n", "a\nb\nc\nD\ne\nf\ng\nh\n")
	want := "...\n  b\n  c\n- d\n+ D\n  e\n  f\n...\n"
	if got != want {
		t.Errorf("lineDiff =\n%s\nwant\n%s", got, want)
	}
}
