// Package golden compares a test's output with a file kept in the
// repository, rewriting the file instead when asked.
package golden

import (
	"bytes"
	"os"
	"testing"
)

// File fails t unless got equals file's content; with update it writes got
// to file first. rerun says how to rewrite it, for the failure message.
func File(t testing.TB, file string, got []byte, update bool, rerun string) {
	t.Helper()
	if update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (%s after a deliberate change):\n%s\nwant\n%s", file, rerun, got, want)
	}
}
