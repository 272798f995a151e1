package capacity

// A design served from each execution environment's memory (a hot post's
// page: lambda/hotpage): the table's load is each reader's own reads, and
// each environment's refresh once per TTL; the environments follow the
// rate (KeptSizing).

import (
	"math"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/hotpage"
	"github.com/example/appsync-dynamo/local/prices"
)

// environments is how many environments Lambda runs at rate (a second).
func environments(rate float64) float64 {
	return min(MaxEnvironments, math.Ceil(rate*PageSeconds*EnvironmentMargin))
}

// sizeKept sizes rec's hot design: each operation's own reads (rec.After,
// Ops-1 of them) at the rate, and one refresh (rec.Refresh, the first
// operation's requests, its own reads included: a bound) per environment
// per TTL.
func sizeKept(rec Recorded, rules Rules) Sizing {
	ttl := hotpage.TTL.Seconds()
	hit, refresh := map[Key]Units{}, map[Key]Units{}
	for _, req := range rec.After {
		for k, u := range rules.Cost(req) {
			hit[k] = hit[k].add(Units{u.Read / (Ops - 1), u.Write / (Ops - 1)})
		}
	}
	kept := 0
	for _, req := range rec.Refresh {
		for k, u := range rules.Cost(req) {
			refresh[k] = refresh[k].add(u)
		}
		for _, r := range req.Reads {
			kept += Size(r.Item)
		}
	}
	keys := slices.Collect(func(yield func(Key) bool) {
		for k := range hit {
			if !yield(k) {
				return
			}
		}
		for k := range refresh {
			if _, ok := hit[k]; !ok && !yield(k) {
				return
			}
		}
	})
	// In one order, so that of partitions equally hot the same is named
	// the hottest every run.
	slices.SortFunc(keys, func(a, b Key) int { return strings.Compare(a.String(), b.String()) })
	// load is partition k's units a second at rate.
	load := func(k Key, rate float64) Units {
		per := environments(rate) / ttl
		return Units{hit[k].Read*rate + refresh[k].Read*per, hit[k].Write*rate + refresh[k].Write*per}
	}
	fits := func(rate float64) (bool, string) {
		if rate*PageSeconds > MaxEnvironments {
			return false, "Lambda's 1,000 concurrent executions"
		}
		for _, k := range keys {
			if u := load(k, rate); u.Read > PartitionReadUnits || u.Write > PartitionWriteUnits {
				return false, k.String()
			}
		}
		return true, ""
	}
	lo, hi := 0.0, 1e7 // the largest rate that fits, by bisection
	for range 60 {
		if mid := (lo + hi) / 2; func() bool { ok, _ := fits(mid); return ok }() {
			lo = mid
		} else {
			hi = mid
		}
	}
	_, limit := fits(hi)
	goal := rec.Workload.Goal
	r := Sizing{Sustained: math.Floor(lo + 1e-6), LimitedBy: limit}
	r.Kept = &KeptSizing{TTLSeconds: ttl, PageSeconds: PageSeconds, MeasuredPageSeconds: round(rec.PageSeconds), Margin: EnvironmentMargin,
		Environments: environments(goal), RefreshesPerSecond: round(environments(goal) / ttl), KeptBytes: kept}
	for _, k := range keys {
		u := load(k, goal)
		l := Load{k, Units{round(u.Read / goal), round(u.Write / goal)}} // per operation, at the goal
		r.Loads = append(r.Loads, l)
		r.PerOp = r.PerOp.add(l.Units)
		if u.Read > r.Kept.HottestReadUnits {
			r.Kept.HottestPartition, r.Kept.HottestReadUnits = k.String(), round(u.Read)
		}
	}
	r.PerOp = Units{round(r.PerOp.Read), round(r.PerOp.Write)}
	r.ProjectorInvocations = round(float64(rec.AfterInvocations) / Ops)
	r.DollarsPerMillion = round(prices.PerMillion(r.PerOp.Read, r.PerOp.Write) + 1e6*r.ProjectorInvocations*prices.LambdaRequest)
	slices.SortFunc(r.Loads, cmpLoads)
	return r
}
