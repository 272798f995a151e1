package resolver_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// TestReplayEvents replays every events/*.json through the handler, each
// against a fresh table loaded with the sample data (with a fixed clock and
// ID sequence, so writes are reproducible), and compares the result with
// testdata/golden/<name>.json.
// Run `go test ./lambda/resolver -run TestReplayEvents -update` to rewrite the
// golden files after a deliberate change, and review the diff.
func TestReplayEvents(t *testing.T) {
	files, err := filepath.Glob("../../events/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no events found: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".json")
		t.Run(name, func(t *testing.T) {
			h := newHandler(t, sample.Data(), storetest.Deterministic(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))...)
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
			got = append(got, '\n')
			path := filepath.Join("testdata", "golden", name+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("no golden file (run with -update to create it): %v", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("replay of %s differs from %s\n--- got\n%s\n--- want\n%s", file, path, got, want)
			}
		})
	}
}
