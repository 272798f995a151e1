package bench

import (
	"fmt"
	"html"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/example/appsync-dynamo/local/prices"
)

// LambdaMemoryMB is the memory the stack gives the function
// (infra/apistack.MemoryMB, in a module of its own: a test checks that the
// two agree).
const LambdaMemoryMB = 512

// Dollars is what a million of one query cost, by service, at the prices
// of package prices: AppSync per operation, Lambda per invocation and per
// GB-second of the durations measured here (arm64, LambdaMemoryMB),
// DynamoDB per read request unit (DynamoDB Local's consumed capacity).
type Dollars struct {
	AppSync, LambdaRequests, LambdaDuration, DynamoDB float64
}

// Total is the sum of the services.
func (d Dollars) Total() float64 { return d.AppSync + d.LambdaRequests + d.LambdaDuration + d.DynamoDB }

func dollarsOf(r Result) Dollars {
	const million = 1e6
	return Dollars{
		AppSync:        million * prices.AppSyncOperation,
		LambdaRequests: million * float64(r.Invocations) * prices.LambdaRequest,
		LambdaDuration: million * float64(r.BilledMs) / 1000 * LambdaMemoryMB / 1024 * prices.LambdaArm64GBSecond,
		DynamoDB:       million * r.RCU * prices.DynamoDBReadRequestUnit,
	}
}

// PrintDollars writes, for each query and layout, what a million of it
// cost, by service.
func PrintDollars(w io.Writer, rows []Row) {
	fmt.Fprintln(w, "| Query | Layout | AppSync | Lambda requests | Lambda duration (billed ms) | DynamoDB reads | $ per million queries |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		for i, res := range r.Results {
			d := res.Dollars()
			fmt.Fprintf(w, "| %s | %s | %.2f | %.2f | %.2f (%d) | %.2f | %.2f |\n", r.Query.Name, Layouts[i],
				d.AppSync, d.LambdaRequests, d.LambdaDuration, res.BilledMs, d.DynamoDB, d.Total())
		}
	}
}

// Priced is one query's dollars per million under each layout (by
// Layouts): what DollarsChart draws.
type Priced struct {
	Query   string
	Layouts []Dollars
	Totals  []float64 // each layout's total, as the table rounds it
}

// PricedQueries picks the named queries' dollars out of rows, in the
// order named.
func PricedQueries(rows []Row, names ...string) []Priced {
	var out []Priced
	for _, name := range names {
		for _, r := range rows {
			if r.Query.Name == name {
				p := Priced{Query: name}
				for _, res := range r.Results {
					p.Layouts = append(p.Layouts, res.Dollars())
					p.Totals = append(p.Totals, math.Round(100*res.Dollars().Total())/100)
				}
				out = append(out, p)
			}
		}
	}
	return out
}

// DollarsChart draws an SVG of the dollars per million of each query under
// each layout, stacked by service: a panel per query, each on its own
// linear axis (dollars, from 0) fitted to the layouts other than the naive
// one, so that the differences among them show; a naive bar past the axis
// is cut at its top and labelled with its total. Over each layout after
// the first two, what it saves against the batched one, in percent.
func DollarsChart(w io.Writer, queries []Priced) {
	const (
		left, top, barW, gap, panelGap, plotH = 56, 64, 46, 10, 56, 240
		legendH                               = 40
	)
	panelW := len(Layouts)*(barW+gap) - gap
	width := left + len(queries)*(panelW+panelGap)
	height := top + plotH + 64 + legendH
	colors := []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2"}
	services := []string{"AppSync", "Lambda requests", "Lambda duration", "DynamoDB reads"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="#fff"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="14" font-weight="bold">Dollars per million queries, by layout</text>`+"\n", 10)
	fmt.Fprintf(&b, `<text x="%d" y="32" fill="#555">AppSync operations, Lambda (arm64, %d MB, durations measured against DynamoDB Local), DynamoDB on-demand reads.</text>`+"\n", 10, LambdaMemoryMB)
	fmt.Fprintf(&b, `<text x="%d" y="47" fill="#555">Each panel has its own dollar axis, from 0; a bar past its top is cut (zigzag) and labelled with its total.</text>`+"\n", 10)
	base := top + plotH
	for g, q := range queries {
		x0 := left + g*(panelW+panelGap)
		most := 0.0
		for _, total := range q.Totals[1:] {
			most = max(most, total)
		}
		axis := niceCeiling(most * 1.15)
		scale := plotH / axis
		for i := 0; i <= 4; i++ {
			v := axis * float64(i) / 4
			y := float64(base) - v*scale
			fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end" fill="#555">$%g</text>`+"\n", x0, y, x0+panelW, y, x0-4, y+4, v)
		}
		for i, d := range q.Layouts {
			x := x0 + i*(barW+gap)
			y := float64(base)
			for k, v := range []float64{d.AppSync, d.LambdaRequests, d.LambdaDuration, d.DynamoDB} {
				h := math.Min(v*scale, y-float64(top))
				y -= h
				fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s, %s: %s $%.2f</title></rect>`+"\n", x, y, barW, h, colors[k], q.Query, Layouts[i], services[k], v)
			}
			total := q.Totals[i]
			if total > axis {
				fmt.Fprintf(&b, `<polyline points="%d,%d %d,%d %d,%d %d,%d %d,%d" fill="none" stroke="#fff" stroke-width="3"/>`+"\n",
					x, top+8, x+barW/4, top+3, x+barW/2, top+8, x+3*barW/4, top+3, x+barW, top+8)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" font-weight="bold">%.2f</text>`+"\n", x+barW/2, y-4, total)
			if i >= 2 {
				change := math.Round(1000*(total/q.Totals[1]-1)) / 10
				fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle" fill="#2b7a3d">%s%%</text>`+"\n", x+barW/2, y-17, strconv.FormatFloat(change+0, 'f', 1, 64))
			}
			words := strings.Fields(Layouts[i])
			for l, word := range words {
				fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">%s</text>`+"\n", x+barW/2, base+14+12*l, word)
			}
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+panelW/2, base+52, html.EscapeString(short(q.Query)))
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#2b7a3d">green: the change against the batched layout</text>`+"\n", 10, height-legendH+36)
	for k, name := range services {
		x := 10 + k*140
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, height-legendH+4, colors[k], x+16, height-legendH+14, name)
	}
	b.WriteString("</svg>\n")
	io.WriteString(w, b.String())
}

// short is a query's name up to its first parenthesis of detail.
func short(name string) string {
	if i := strings.Index(name, " ("); i > 0 {
		return name[:i]
	}
	return name
}

// niceCeiling is the least round number (1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8
// times a power of ten, times 4: the chart's four steps) at or above v.
func niceCeiling(v float64) float64 {
	if v <= 0 {
		return 1
	}
	e := math.Floor(math.Log10(v / 4))
	times := func(m float64) float64 { // 4m x 10^e, rounded once (dividing by 10^-e for e < 0)
		if e < 0 {
			return 4 * m / math.Pow(10, -e)
		}
		return 4 * m * math.Pow(10, e)
	}
	for _, m := range []float64{1, 1.5, 2, 2.5, 3, 4, 5, 6, 8} {
		if times(m) >= v {
			return times(m)
		}
	}
	return times(10)
}
