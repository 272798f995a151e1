package capacity

import (
	"fmt"
	"html"
	"io"
	"math"
)

// Chart draws each workload's sustained rate against its goal as an SVG
// of horizontal bars on a logarithmic axis (10 to 1,000,000 a second): for
// each workload a bar for today's design and one for the design for a hot
// target, red when short of the goal, and a line at the goal.
func Chart(w io.Writer, results []Result) {
	const (
		left, width, row, top = 20, 560, 64, 44
		lo, hi                = 1.0, 6.0 // log10 of the axis ends
	)
	x := func(rate float64) float64 {
		l := math.Log10(math.Max(rate, 10))
		return left + (math.Min(l, hi)-lo)/(hi-lo)*width
	}
	height := top + row*len(results) + 30
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left*2+width+30, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="16" font-size="14" font-weight="bold">Operations a second the table sustains, by DynamoDB's documented limits</text>`+"\n", left)
	fmt.Fprintf(w, `<text x="%d" y="31" fill="#555">upper bar: today; lower: hot (red: short of the goal); black line: the goal</text>`+"\n", left)
	for e := lo; e <= hi; e++ {
		gx := x(math.Pow(10, e))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", gx, top-6, gx, height-24)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx, height-10, count(math.Pow(10, e)))
	}
	for i, r := range results {
		y := top + i*row
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left, y+10, html.EscapeString(r.Name))
		for j, d := range []Sizing{r.Before, r.After} {
			by := y + 15 + j*17
			color := "#2b7a3d"
			if d.Sustained < r.Goal {
				color = "#c0392b"
			}
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="13" fill="%s"><title>%s: %s a second, limited by %s</title></rect>`+"\n",
				left, by, x(d.Sustained)-left, color, []string{"today", "hot"}[j], count(d.Sustained), html.EscapeString(d.LimitedBy))
			label := count(d.Sustained)
			if k := d.Kept; k != nil {
				label += fmt.Sprintf(" (kept %s s in each environment; %s environments, %s RCU/s on the post at the goal)",
					units(k.TTLSeconds), count(k.Environments), count(k.HottestReadUnits))
			}
			fmt.Fprintf(w, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x(d.Sustained)+4, by+11, color, html.EscapeString(label))
		}
		gx := x(r.Goal)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="2"><title>goal: %s a second</title></line>`+"\n", gx, y+12, gx, y+50, count(r.Goal))
	}
	fmt.Fprintln(w, `</svg>`)
}
