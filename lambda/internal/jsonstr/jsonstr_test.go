package jsonstr_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/internal/jsonstr"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// Append writes what payload.Marshal writes for every string, after what
// dst holds.
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "<a href=\"x\">&amp;</a>", "tab\tnl\nbs\\ bell\a \b \f \x7f", "\u2028\u2029 😀 é",
		"bad \xff utf8 \xed\xa0\x80", "\x00\x1f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := payload.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := jsonstr.Append([]byte("x"), s); string(got) != "x"+string(want) {
			t.Fatalf("Append(x, %q) = %s, Marshal = %s", s, got, want)
		}
	})
}
