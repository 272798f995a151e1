package capacity

import (
	"fmt"
	"html"
	"io"
	"math"
)

// Chart draws each workload's sustained rate against its goal as an SVG
// of horizontal bars on a logarithmic axis (10 to 1,000,000 a second): a
// bar for the rate the model sustains, red when it falls short of the
// goal, and a line at the goal.
func Chart(w io.Writer, results []Result) {
	const (
		left, width, row, top = 20, 560, 46, 44
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
	fmt.Fprintf(w, `<text x="%d" y="31" fill="#555">bar: the rate no partition key exceeds its limits at (red: short of the goal); black line: the goal</text>`+"\n", left)
	for e := lo; e <= hi; e++ {
		gx := x(math.Pow(10, e))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", gx, top-6, gx, height-24)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx, height-10, count(math.Pow(10, e)))
	}
	for i, r := range results {
		y := top + i*row
		color := "#2b7a3d"
		if r.Sustained < r.Goal {
			color = "#c0392b"
		}
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left, y+10, html.EscapeString(r.Name))
		fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="14" fill="%s"><title>%s a second, limited by %s</title></rect>`+"\n",
			left, y+16, x(r.Sustained)-left, color, count(r.Sustained), html.EscapeString(r.LimitedBy))
		fmt.Fprintf(w, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x(r.Sustained)+4, y+28, color, count(r.Sustained))
		gx := x(r.Goal)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="2"><title>goal: %s a second</title></line>`+"\n", gx, y+12, gx, y+34, count(r.Goal))
	}
	fmt.Fprintln(w, `</svg>`)
}
