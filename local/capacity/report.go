package capacity

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Print writes each workload's sustained rate against its goal, before and
// after, and its hottest partition keys (at most top of each), as Markdown.
func Print(w io.Writer, results []Result, top int) {
	fmt.Fprintln(w, "| Workload | Goal /s | Design | Sustained /s | Limited by | RCU, WCU per operation | Projector invocations per operation | $ per million |")
	fmt.Fprintln(w, "|---|---:|---|---:|---|---:|---:|---:|")
	for _, r := range results {
		for i, d := range []Sizing{r.Before, r.After} {
			name, goal, design := r.Name, count(r.Goal), "today"
			if i == 1 {
				name, goal, design = "", "", "hot"
				if d.Kept != nil {
					design = "hot, kept in memory"
				}
				if !r.HasHot() {
					design = "hot (nothing yet: as today)"
				}
			}
			fmt.Fprintf(w, "| %s | %s | %s | %s | `%s` | %s, %s | %s | %s |\n", name, goal, design, count(d.Sustained), d.LimitedBy,
				units(d.PerOp.Read), units(d.PerOp.Write), units(d.ProjectorInvocations), units(d.DollarsPerMillion))
		}
	}
	for _, r := range results {
		if k := r.After.Kept; k != nil {
			fmt.Fprintf(w, "\n%s (hot): each execution environment keeps the page for %s s; at the goal, %s environments "+
				"(%s a second x %s s x %s, at most %s), %s refreshes a second, %s RCU a second on `%s`; an environment keeps %s bytes "+
				"of what one refresh reads.\n", r.Name, units(k.TTLSeconds), count(k.Environments), count(r.Goal), units(k.PageSeconds),
				units(k.Margin), count(MaxEnvironments), count(k.RefreshesPerSecond), count(k.HottestReadUnits), k.HottestPartition, count(float64(k.KeptBytes)))
		}
	}
	for _, r := range results {
		for i, d := range []Sizing{r.Before, r.After} {
			if i == 1 && r.After.LimitedBy == r.Before.LimitedBy && r.After.PerOp == r.Before.PerOp {
				continue
			}
			per := "units per operation"
			if d.Kept != nil {
				per = "units per operation at the goal's rate, the environments' refreshes shared among them"
			}
			fmt.Fprintf(w, "\n%s (%s), its hottest partition keys (%s, and at the goal's rate against the limits):\n\n", r.Name, []string{"today", "hot"}[i], per)
			fmt.Fprintln(w, "| Partition key | RCU | WCU | At the goal: RCU/s, WCU/s | Sustains /s |")
			fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
			for k, l := range d.Loads {
				if k == top {
					break
				}
				fmt.Fprintf(w, "| `%s` | %s | %s | %s of 3,000, %s of 1,000 | %s |\n", l.Key, units(l.Read), units(l.Write), count(l.Read*r.Goal), count(l.Write*r.Goal), count(l.Rate()))
			}
		}
	}
}

// count formats n as a whole number with thousands separators.
func count(n float64) string {
	if n > 1e15 {
		return "unlimited"
	}
	s := fmt.Sprintf("%.0f", n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// units formats capacity units to two decimals, without trailing zeros.
func units(u float64) string { return strconv.FormatFloat(math.Round(u*100)/100, 'f', -1, 64) }

// WriteJSON writes the results to file, creating its directory.
func WriteJSON(file string, results []Result) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// Headline says what one hot post or user takes, as the README's table of
// figures says it: each hot design's sustained rate and today's.
func Headline(results []Result) string {
	var parts []string
	for _, r := range results {
		if r.After.Sustained == r.Before.Sustained && r.After.PerOp == r.Before.PerOp {
			continue
		}
		how := "written to shards past the threshold"
		if r.After.Kept != nil {
			how = fmt.Sprintf("kept %s s in each environment", units(r.After.Kept.TTLSeconds))
		}
		parts = append(parts, fmt.Sprintf("%s: %s a second (%s today; %s)", r.Name, count(r.After.Sustained), count(r.Before.Sustained), how))
	}
	return strings.Join(parts, "; ")
}
