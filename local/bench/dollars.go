package bench

import (
	"fmt"
	"io"
	"math"
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

// DollarsChart draws an SVG bar chart of the dollars per million queries
// of the named queries under each layout, stacked by service.
func DollarsChart(w io.Writer, rows []Row, names ...string) {
	var chosen []Row
	for _, name := range names {
		for _, r := range rows {
			if r.Query.Name == name {
				chosen = append(chosen, r)
			}
		}
	}
	most := 0.0
	for _, r := range chosen {
		for _, res := range r.Results {
			most = max(most, res.Dollars().Total())
		}
	}
	const (
		left, top, barW, gap, groupGap, plotH = 70, 50, 34, 6, 40, 260
		legendH                               = 60
	)
	groupW := len(Layouts)*(barW+gap) + groupGap
	width := max(left+len(chosen)*groupW+20, 780)
	height := top + plotH + 70 + legendH
	axis := niceCeiling(most)
	scale := plotH / axis
	colors := []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2"}
	services := []string{"AppSync", "Lambda requests", "Lambda duration", "DynamoDB reads"}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="16" font-size="14">Dollars per million queries, by layout</text>`+"\n", left)
	fmt.Fprintf(&b, `<text x="%d" y="32" fill="#555">AppSync operations, Lambda (arm64, %d MB, durations measured against DynamoDB Local), DynamoDB on-demand reads</text>`+"\n", left, LambdaMemoryMB)
	base := top + plotH
	for i := 0; i <= 4; i++ {
		v := axis * float64(i) / 4
		y := float64(base) - v*scale
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">$%g</text>`+"\n", left, y, width-20, y, left-6, y+4, v)
	}
	for g, r := range chosen {
		x0 := left + g*groupW + groupGap/2
		for i, res := range r.Results {
			d := res.Dollars()
			x := x0 + i*(barW+gap)
			y := float64(base)
			for k, v := range []float64{d.AppSync, d.LambdaRequests, d.LambdaDuration, d.DynamoDB} {
				h := v * scale
				y -= h
				fmt.Fprintf(&b, `<rect x="%d" y="%.1f" width="%d" height="%.1f" fill="%s"><title>%s, %s: %s $%.2f</title></rect>`+"\n", x, y, barW, h, colors[k], r.Query.Name, Layouts[i], services[k], v)
			}
			fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="middle">%.2f</text>`+"\n", x+barW/2, y-4, d.Total())
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end" transform="rotate(-40 %d %d)">%s</text>`+"\n", x+barW/2, base+14, x+barW/2, base+14, Layouts[i])
		}
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" font-weight="bold">%s</text>`+"\n", x0+len(Layouts)*(barW+gap)/2, base+62, short(r.Query.Name))
	}
	for k, name := range services {
		x := left + k*150
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, height-legendH+20, colors[k], x+16, height-legendH+30, name)
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
