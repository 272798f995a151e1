package store

import (
	"encoding/json"
	"slices"
	"testing"
)

// An object's members are written as encoding/json writes them, those not
// read left out; a list of strings as a JSON array ([] for nil).
func TestAnObjectWritesWhatWasRead(t *testing.T) {
	for _, tc := range []struct {
		read attributes
		list []string
	}{{nil, nil}, {nil, []string{}}, {nil, []string{"a", "\u2028<\"é\U0001F600"}}, {attributes{"n", "l"}, []string{"x"}}, {attributes{"s"}, []string{"x"}}} {
		o := tc.read.object(nil)
		o.string("s", "v\u2028")
		o.int("n", -7)
		o.strings("l", tc.list)
		got := o.end()
		want := map[string]any{"s": "v\u2028", "n": -7, "l": tc.list}
		if tc.list == nil {
			want["l"] = []string{}
		}
		for k := range want {
			if tc.read != nil && !slices.Contains(tc.read, k) {
				delete(want, k)
			}
		}
		var g any
		if err := json.Unmarshal(got, &g); err != nil {
			t.Fatalf("%s: %v", got, err)
		}
		if gs, ws := canonical(g), canonical(want); gs != ws {
			t.Errorf("read %v: wrote %s, want %s", tc.read, got, ws)
		}
	}
}

// canonical is v as encoding/json writes it after a round trip (numbers
// as float64, maps by key).
func canonical(v any) string {
	b, _ := json.Marshal(v)
	var back any
	json.Unmarshal(b, &back)
	b, _ = json.Marshal(back)
	return string(b)
}
