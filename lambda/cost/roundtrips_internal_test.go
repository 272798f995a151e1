package cost

import (
	"testing"
	"time"
)

func TestRoundTrips(t *testing.T) {
	at := func(ms int) time.Time { return time.Unix(0, 0).Add(time.Duration(ms) * time.Millisecond) }
	for _, tc := range []struct {
		name  string
		calls [][2]int // start, end in ms
		want  int
	}{
		{"none", nil, 0},
		{"one", [][2]int{{0, 5}}, 1},
		{"three at once", [][2]int{{0, 5}, {1, 6}, {0, 4}}, 1},
		{"one after the other", [][2]int{{0, 5}, {5, 9}, {10, 12}}, 3},
		// user, then posts, then 11 comment Queries together, then authors.
		{"levels", [][2]int{{0, 3}, {4, 7}, {8, 12}, {8, 11}, {9, 13}, {8, 10}, {14, 16}}, 4},
		// A slow call overlapping a chain of two counts once; the chain twice.
		{"slow beside a chain", [][2]int{{0, 20}, {1, 3}, {4, 6}}, 2},
		{"recorded out of order", [][2]int{{10, 12}, {0, 5}, {6, 9}}, 3},
	} {
		m := &Meter{}
		for _, c := range tc.calls {
			m.record(Call{Operation: "Query", Start: at(c[0]), End: at(c[1])})
		}
		if got := m.RoundTrips(); got != tc.want {
			t.Errorf("%s: RoundTrips = %d, want %d", tc.name, got, tc.want)
		}
	}
}
