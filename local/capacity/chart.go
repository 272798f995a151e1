package capacity

import (
	"fmt"
	"html"
	"io"
	"math"
)

// HasHot reports whether the workload has a design for a hot target of its
// own: one that sizes differently from today's.
func (r Result) HasHot() bool {
	return r.After.Sustained != r.Before.Sustained || r.After.LimitedBy != r.Before.LimitedBy || r.After.PerOp != r.Before.PerOp
}

// Chart draws each workload's sustained rate against its goal as an SVG
// of horizontal bars on a logarithmic axis fitted to the figures (from the
// power of ten below the smallest to the one above the largest): for each
// workload a bar for today's design and, where there is one, one for the
// design for a hot target, red when short of the goal, and a line at the
// goal.
func Chart(w io.Writer, results []Result) {
	const left, width, top, bar, gap = 20, 600, 60, 13, 4
	lo, hi := math.Inf(1), math.Inf(-1) // log10 of the axis ends
	for _, r := range results {
		for _, v := range []float64{r.Goal, r.Before.Sustained, r.After.Sustained} {
			lo, hi = math.Min(lo, math.Floor(math.Log10(math.Max(v, 1)))), math.Max(hi, math.Ceil(math.Log10(math.Max(v, 1))))
		}
	}
	hi = math.Max(hi, lo+1)
	x := func(rate float64) float64 {
		return left + (math.Log10(math.Max(rate, 1))-lo)/(hi-lo)*width
	}
	rows := make([]int, len(results)) // each workload's height
	height := top
	for i, r := range results {
		rows[i] = 20 + bar + gap + 10
		if r.HasHot() {
			rows[i] += bar + gap
		}
		height += rows[i]
	}
	axis := height
	height += 44
	fmt.Fprintf(w, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", left*2+width+100, height)
	fmt.Fprintf(w, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(w, `<text x="%d" y="16" font-size="14" font-weight="bold">Operations a second the table sustains, by DynamoDB's documented limits</text>`+"\n", left)
	fmt.Fprintf(w, `<text x="%d" y="33" fill="#555">upper bar: today's design; lower bar: the design for a hot target, where there is one;</text>`+"\n", left)
	fmt.Fprintf(w, `<text x="%d" y="48" fill="#555">green: meets the goal; red: short of it; black line: the goal</text>`+"\n", left)
	for e := lo; e <= hi; e++ {
		gx := x(math.Pow(10, e))
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", gx, top-6, gx, axis)
		fmt.Fprintf(w, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", gx, axis+14, count(math.Pow(10, e)))
	}
	fmt.Fprintf(w, `<text x="%d" y="%d" text-anchor="middle" fill="#333">operations a second (logarithmic scale: each gridline ten times the one before)</text>`+"\n", left+width/2, axis+34)
	y := top
	for i, r := range results {
		fmt.Fprintf(w, `<text x="%d" y="%d">%s</text>`+"\n", left, y+12, html.EscapeString(r.Name))
		designs := []Sizing{r.Before}
		if r.HasHot() {
			designs = append(designs, r.After)
		}
		for j, d := range designs {
			by := y + 18 + j*(bar+gap)
			color := "#2b7a3d"
			if d.Sustained < r.Goal {
				color = "#c0392b"
			}
			fmt.Fprintf(w, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s a second, limited by %s</title></rect>`+"\n",
				left, by, x(d.Sustained)-left, bar, color, []string{"today", "hot"}[j], count(d.Sustained), html.EscapeString(d.LimitedBy))
			label := count(d.Sustained)
			if k := d.Kept; k != nil {
				label += fmt.Sprintf(" (kept %s s in each environment)", units(k.TTLSeconds))
			}
			fmt.Fprintf(w, `<text x="%.1f" y="%d" fill="%s">%s</text>`+"\n", x(d.Sustained)+4, by+11, color, html.EscapeString(label))
		}
		gx := x(r.Goal)
		fmt.Fprintf(w, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-width="2"><title>goal: %s a second</title></line>`+"\n",
			gx, y+15, gx, y+18+len(designs)*(bar+gap), count(r.Goal))
		y += rows[i]
	}
	fmt.Fprintln(w, `</svg>`)
}
