package capacity

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"io"
	"log/slog"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/hotpage"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/prices"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/streams"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// A partition's limits, a second (the conservative rule: a partition key
// is one partition).
const (
	PartitionReadUnits  = 3000
	PartitionWriteUnits = 1000
)

// Ops is how many times a workload's operation runs, each by another user:
// a partition that every operation lands on (the hot one) takes all of its
// units, one that each user has of its own a share.
const Ops = 100

// Workload is one operation repeated at a rate: what the model sizes, on
// today's design (before) and on the design for a hot target (after).
type Workload struct {
	Name string
	Goal float64 // operations a second the design must sustain
	// Op runs the operation once on target as actor (the i-th of Ops users).
	Op func(ctx context.Context, e *Env, target, actor string) error
	// Target is the post or user the operations are on: before, and after
	// (another one, of the same size, that Hot turns hot).
	Target func(e *Env, after bool) string
	// Hot turns target hot, as the design does past its threshold; nil when
	// the design has nothing for this workload yet (after is before).
	Hot func(ctx context.Context, e *Env, target string) error
	// Kept: on the hot design, each execution environment serves the
	// operation from its memory, reading the table once per
	// hotpage.TTL (lambda/hotpage); the model sizes the environments
	// (KeptSizing).
	Kept bool
}

// Env is a table on DynamoDB Local holding the workloads' data, with a
// store whose requests are recorded, the local AppSync over it, and the
// stream's two consumers (the feed's projector, the trending aggregator)
// reading the table's stream through the same recorder.
type Env struct {
	Store *store.Store
	// Uncached is Store keeping nothing in memory (no hot page, no
	// ranking): today's design of what Store keeps.
	Uncached *store.Store
	Rec      *Recorder
	Exec     *executor.Executor
	poller   *streams.Poller
	// trends is the trending aggregator's poller, on a window that ends
	// when Drain ends it: a window's writes for the operations of a run.
	trends *streams.Poller
	// ranking is the trending buckets Store reads its rankings from, each
	// window's kept for trending.KeepFor.
	ranking *trending.Buckets
	// Viral are ViralPosts small posts by carol, for the viral hour.
	Viral []string
	// Largest and LargestToo are posts of the largest size (a 200-character
	// title and a 20,000-character body of four-byte characters), by bob,
	// with 20 comments each.
	Largest, LargestToo string
	// Popular is the author of the seed's query (50 posts, 20 comments each);
	// PopularToo another user, with posts, to turn hot.
	Popular, PopularToo string
}

// Drain applies, with the projector and the aggregator, what the table's
// stream holds now, and ends the aggregator's window.
func (e *Env) Drain(ctx context.Context) error {
	if _, err := e.poller.Poll(ctx); err != nil {
		return err
	}
	if _, err := e.trends.Poll(ctx); err != nil {
		return err
	}
	return e.trends.CloseWindows(ctx)
}

// invocations is the stream consumers' invocations so far.
func (e *Env) invocations() int { return e.poller.Invocations + e.trends.Invocations }

// ViralPosts is the viral hour's posts: its target before and after, and
// one for each of the other half of its Ops (each then takes 1/Ops of the
// rate, where a real viral hour spreads them over many more).
const ViralPosts = 2 + Ops/2

// Actor is the name of the i-th user an operation runs as.
func Actor(i int) string { return fmt.Sprintf("u_actor%03d", i) }

// actorIndex is i of Actor(i).
func actorIndex(actor string) int {
	var i int
	fmt.Sscanf(actor, "u_actor%03d", &i)
	return i
}

// Clock is the model's still clock: a fixed date after anything the tests
// run at (the projector compares a post's age with the real time).
var Clock = time.Date(2030, 6, 3, 12, 0, 0, 0, time.UTC)

// NewEnv loads the workloads' data into table (created by the caller, with
// its stream) on the DynamoDB Local at endpoint, and records the store's
// requests to it.
func NewEnv(ctx context.Context, endpoint, table string) (*Env, error) {
	client := ddblocal.Client(endpoint)
	d := sample.Blog(50, 20, 30)
	const four, stamp = "\U0001F600", "2006-01-02T15:04:05.000Z"
	id := func(t time.Time) string {
		return ulid.MustNew(ulid.Timestamp(t), bytes.NewReader(make([]byte, 10))).String()
	}
	var largest []string
	for i := range 2 {
		at := time.Date(2024, 6, 1+i, 8, 0, 0, 0, time.UTC)
		p := store.Post{ID: id(at), AuthorID: sample.Bob, Title: strings.Repeat(four, 200), Body: strings.Repeat(four, 20000),
			CreatedAt: at.Format(stamp), UpdatedAt: at.Format(stamp), Status: store.StatusPublished, CommentCount: 20}
		d.Posts = append(d.Posts, p)
		largest = append(largest, p.ID)
		for j := range 20 {
			c := at.Add(time.Duration(j+1) * time.Minute)
			d.Comments = append(d.Comments, store.Comment{ID: id(c), PostID: p.ID, AuthorID: fmt.Sprintf("u_reader%02d", j+1), Body: "A comment.", CreatedAt: c.Format(stamp)})
		}
	}
	for i := range Ops {
		d.Users = append(d.Users, store.User{ID: Actor(i), Handle: fmt.Sprintf("actor%03d", i), Name: fmt.Sprintf("Actor %d", i), CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	var viral []string
	for i := range ViralPosts {
		at := time.Date(2024, 6, 10, 8, i, 0, 0, time.UTC)
		d.Posts = append(d.Posts, store.Post{ID: id(at), AuthorID: sample.Carol, Title: fmt.Sprintf("Viral %d", i), Body: "A post.",
			CreatedAt: at.Format(stamp), UpdatedAt: at.Format(stamp), Status: store.StatusPublished})
		viral = append(viral, id(at))
	}
	for i := range d.Users {
		switch d.Users[i].ID {
		case sample.Bob:
			d.Users[i].PostCount += len(largest)
		case sample.Carol:
			d.Users[i].PostCount += len(viral)
		}
	}
	tokens := cursor.New([]byte(cursor.DevelopmentKey))
	if err := store.New(client, table, tokens).Load(ctx, d); err != nil {
		return nil, err
	}
	rec := NewRecorder(client, table)
	// A still clock: what a store reads at most once a second (a hot post's
	// counts for a like's answer) it reads once per workload here, however
	// long DynamoDB Local takes, so that the figures do not depend on it;
	// and hot posts' shards from the first, for the same reason. It stands
	// at a fixed date: DynamoDB sizes a number by its significant digits, so
	// the TTLs written from the clock (trending's buckets, the progress) read
	// a few bytes more or less from one day to the next.
	now := Clock
	s := store.New(rec, table, tokens, store.WithClock(func() time.Time { return now }), hotkeys.SpreadFrom(0))
	sch, err := schema.Load()
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	exec := executor.New(sch, lambda.NewHandler(resolver.New(s, quiet, resolver.WithFeature(hotpage.Feature(s)), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))), resolver.CoreRoutes)
	arn, err := ddblocal.StreamARN(ctx, client, table)
	if err != nil {
		return nil, err
	}
	fn := lambda.NewHandler(wired.Projector(s, quiet).Handle)
	poller := streams.New(ddblocal.StreamsClient(endpoint), arn, fn, streams.Config{BatchSize: projector.StreamBatchSize, Filter: streams.Matches(wired.ProjectorFilters)}, &streams.Checkpoints{})
	trends := streams.New(ddblocal.StreamsClient(endpoint), arn, lambda.NewHandler(trending.New(trending.NewBuckets(s), quiet).Handle),
		streams.Config{BatchSize: trending.StreamBatchSize, Filter: streams.Matches(trending.StreamFilters), Window: 24 * time.Hour}, &streams.Checkpoints{})
	uncached := store.New(rec, table, tokens, store.WithClock(func() time.Time { return now }), hotkeys.SpreadFrom(0))
	e := &Env{Store: s, Uncached: uncached, Rec: rec, Exec: exec, poller: poller, trends: trends, ranking: trending.NewBuckets(s), Viral: viral,
		Largest: largest[0], LargestToo: largest[1], Popular: sample.Alice, PopularToo: sample.Bob}
	if err := e.Drain(ctx); err != nil { // the load's records
		return nil, err
	}
	rec.Take()
	return e, nil
}

// Query runs a GraphQL request as actor (signed in) through the local AppSync.
func (e *Env) Query(ctx context.Context, actor, query string) error {
	resp := e.Exec.Execute(ctx, executor.Request{Query: query, Identity: &appsync.Identity{Sub: actor, Username: actor}})
	if len(resp.Errors) > 0 {
		return fmt.Errorf("%s", resp.Errors[0].Message)
	}
	return nil
}

// Workloads are the issue's: what a hot post and a popular user must serve.
func Workloads() []Workload {
	largest := func(e *Env, after bool) string {
		if after {
			return e.LargestToo
		}
		return e.Largest
	}
	popular := func(e *Env, after bool) string {
		if after {
			return e.PopularToo
		}
		return e.Popular
	}
	// A user taking 10,000 follows a second is past the pull threshold
	// within a second: hot, and read at read time (its follows backfill
	// nothing).
	celebrity := func(ctx context.Context, e *Env, user string) error {
		if err := hotkeys.Of(e.Store).MakeUserHot(ctx, user); err != nil {
			return err
		}
		return feed.NewTable(e.Store).MarkPulled(ctx, user)
	}
	makeHot := func(ctx context.Context, e *Env, post string) error { return hotkeys.Of(e.Store).MakeHot(ctx, post) }
	return []Workload{
		{"comments on one post of the largest size", 1000, func(ctx context.Context, e *Env, post, actor string) error {
			_, err := e.Store.CreateComment(ctx, actor, post, "A comment.")
			return err
		}, largest, makeHot, false},
		{"likes on one post", 10000, func(ctx context.Context, e *Env, post, actor string) error {
			_, err := e.Store.LikePost(ctx, actor, post, []string{"id", "likeCount"})
			return err
		}, largest, makeHot, false},
		{"new followers of one user", 10000, func(ctx context.Context, e *Env, user, actor string) error {
			_, err := e.Store.Follow(ctx, actor, user)
			return err
		}, popular, celebrity, false},
		{"readers of one post's page (post, first 20 comments with authors, likeCount, likedByMe)", 10000, func(ctx context.Context, e *Env, post, actor string) error {
			return e.Query(ctx, actor, `{ post(id: "`+post+`") { title body likeCount likedByMe comments(limit: 20) { items { body author { name } } } } }`)
		}, largest, makeHot, true},
		{"a viral hour: likes on many posts, one of them taking half", 10000, func(ctx context.Context, e *Env, post, actor string) error {
			if i := actorIndex(actor); i%2 == 1 {
				post = e.Viral[2+i/2] // another post for each of the others
			}
			_, err := e.Store.LikePost(ctx, actor, post, []string{"id", "likeCount"})
			return err
		}, func(e *Env, after bool) string {
			if after {
				return e.Viral[1]
			}
			return e.Viral[0]
		}, makeHot, false},
		{"readers of trending(WEEK), its top 20 posts with their scores", 10000, func(ctx context.Context, e *Env, kept, actor string) error {
			b := trending.NewBuckets(e.Uncached, trending.WithKeep(0))
			if kept == "kept" {
				b = e.ranking
			}
			_, err := b.Ranking(ctx, trending.Week, 20)
			return err
		}, func(_ *Env, after bool) string {
			if after {
				return "kept"
			}
			return "uncached"
		}, func(context.Context, *Env, string) error { return nil }, true},
		{"the seed's query for one popular author", 1000, func(ctx context.Context, e *Env, user, actor string) error {
			return e.Query(ctx, actor, `{ user(id: "`+user+`") { name posts(limit: 10) { items { title comments { items { body author { name } } } } } } }`)
		}, popular, nil, false},
	}
}

// Load is what one operation of a workload puts on one partition key, on
// average over its runs.
type Load struct {
	Key Key
	Units
}

// Rate is the operations a second this load sustains within the
// partition's limits.
func (l Load) Rate() float64 {
	r := math.Inf(1)
	if l.Read > 0 {
		r = PartitionReadUnits / l.Read
	}
	if l.Write > 0 {
		r = min(r, PartitionWriteUnits/l.Write)
	}
	return r
}

// Recorded is the requests a workload made, Ops operations of it, on
// today's design and on the design for a hot target (the projector's
// requests for them included).
type Recorded struct {
	Workload      Workload
	Before, After []Request
	// Refresh is, for a Kept workload, the first operation's requests on the
	// hot design (what an environment reads once per TTL); After holds the
	// others' (what each reader reads of its own), and PageSeconds their
	// median duration through the local AppSync.
	Refresh     []Request
	PageSeconds float64
	// BeforeInvocations and AfterInvocations are the projector's
	// invocations for them: the batches of the stream's records its filter
	// selects.
	BeforeInvocations, AfterInvocations int
}

// Run runs each workload Ops times before and Ops times after (on its hot
// target, when the design has one), each by another actor, recording its
// requests and, after, the projector's.
func Run(ctx context.Context, e *Env, workloads []Workload) ([]Recorded, error) {
	var out []Recorded
	// run runs w Ops times on target: each operation's requests, then the
	// projector's, its invocations, and the operations' median duration.
	run := func(w Workload, target string) ([][]Request, []Request, int, float64, error) {
		if err := e.Drain(ctx); err != nil {
			return nil, nil, 0, 0, err
		}
		e.Rec.Take()
		invoked := e.invocations()
		ops := make([][]Request, Ops)
		took := make([]time.Duration, Ops)
		for i := range Ops {
			start := time.Now()
			if err := w.Op(ctx, e, target, Actor(i)); err != nil {
				return nil, nil, 0, 0, fmt.Errorf("%s: %w", w.Name, err)
			}
			took[i] = time.Since(start)
			ops[i] = e.Rec.Take()
		}
		if err := e.Drain(ctx); err != nil {
			return nil, nil, 0, 0, err
		}
		slices.Sort(took[1:])
		if err := e.Rec.Err(); err != nil {
			return nil, nil, 0, 0, err
		}
		return ops, e.Rec.Take(), e.invocations() - invoked, took[1+(Ops-1)/2].Seconds(), nil
	}
	for _, w := range workloads {
		r := Recorded{Workload: w}
		ops, projected, invocations, _, err := run(w, w.Target(e, false))
		if err != nil {
			return nil, err
		}
		r.Before, r.BeforeInvocations = append(slices.Concat(ops...), projected...), invocations
		r.After, r.AfterInvocations = r.Before, r.BeforeInvocations
		if w.Hot != nil {
			target := w.Target(e, true)
			if err := w.Hot(ctx, e, target); err != nil {
				return nil, err
			}
			if ops, projected, r.AfterInvocations, r.PageSeconds, err = run(w, target); err != nil {
				return nil, err
			}
			r.After = append(slices.Concat(ops...), projected...)
			if w.Kept {
				r.Refresh, r.After = ops[0], append(slices.Concat(ops[1:]...), projected...)
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Result is a workload as the model sizes it, before and after.
type Result struct {
	Name   string  `json:"name"`
	Goal   float64 `json:"goal"` // operations a second
	Before Sizing  `json:"before"`
	After  Sizing  `json:"after"`
}

// Sizing is one design of a workload, as the model sizes it.
type Sizing struct {
	Sustained float64 `json:"sustained"` // operations a second with no partition over its limit
	LimitedBy string  `json:"limitedBy"` // the partition key that sets it
	PerOp     Units   `json:"perOperation"`
	// ProjectorInvocations is the projector's invocations per operation.
	ProjectorInvocations float64 `json:"projectorInvocationsPerOperation"`
	// DollarsPerMillion is what a million operations cost in on-demand
	// request units and the projector's invocation requests (package
	// prices; not its duration: see docs/capacity.md).
	DollarsPerMillion float64 `json:"dollarsPerMillion"`
	Loads             []Load  `json:"-"` // by partition, the hottest first
	// Kept is, for a design that serves from each environment's memory,
	// how the environments were sized.
	Kept *KeptSizing `json:"kept,omitempty"`
}

// KeptSizing is a design served from each execution environment's memory:
// at a rate R, Lambda runs E = min(MaxEnvironments, R x PageSeconds x
// EnvironmentMargin) environments (Little's law, with a margin), each
// reading the table once per TTL (what one refresh reads), and every
// operation reads its own part (likedByMe, the caller's).
type KeptSizing struct {
	TTLSeconds          float64 `json:"ttlSeconds"`
	PageSeconds         float64 `json:"pageSeconds"`         // an operation's duration, as the model takes it
	MeasuredPageSeconds float64 `json:"measuredPageSeconds"` // its median through the local AppSync, this run
	Margin              float64 `json:"margin"`
	// At the goal's rate: the environments, their refreshes a second, and
	// the hottest partition's read units a second.
	Environments       float64 `json:"environmentsAtGoal"`
	RefreshesPerSecond float64 `json:"refreshesPerSecondAtGoal"`
	HottestPartition   string  `json:"hottestPartitionAtGoal"`
	HottestReadUnits   float64 `json:"hottestReadUnitsPerSecondAtGoal"`
	// KeptBytes is what one environment keeps of the page: the items one
	// refresh reads.
	KeptBytes int `json:"keptBytes"`
}

// How the model sizes a kept design's environments: a page served from
// memory takes PageSeconds of a Lambda invocation, stated for AWS (one
// BatchGetItem for likedByMe, the reply of the largest post, the
// invocation), above the local median make capacity prints; EnvironmentMargin
// covers bursts; MaxEnvironments is the account's default concurrency.
const (
	PageSeconds       = 0.05
	EnvironmentMargin = 1.5
	MaxEnvironments   = 1000
)

// Cost costs each recorded workload by rules.
func Cost(recorded []Recorded, rules Rules) []Result {
	var results []Result
	for _, rec := range recorded {
		after := size(rec.After, rec.AfterInvocations, rules)
		if rec.Workload.Kept {
			after = sizeKept(rec, rules)
		}
		results = append(results, Result{Name: rec.Workload.Name, Goal: rec.Workload.Goal,
			Before: size(rec.Before, rec.BeforeInvocations, rules), After: after})
	}
	return results
}

// cmpLoads orders loads the hottest first (the lowest rate they sustain),
// then by key.
func cmpLoads(a, b Load) int {
	return cmp.Or(cmp.Compare(a.Rate(), b.Rate()), strings.Compare(a.Key.String(), b.Key.String()))
}

// round drops the float error of sums of halves and quarters.
func round(u float64) float64 { return math.Round(u*1e6) / 1e6 }

func size(reqs []Request, invocations int, rules Rules) Sizing {
	byKey := map[Key]Units{}
	for _, req := range reqs {
		for k, u := range rules.Cost(req) {
			byKey[k] = byKey[k].add(u)
		}
	}
	r := Sizing{Sustained: math.Inf(1)}
	for k, u := range byKey {
		l := Load{k, Units{round(u.Read / Ops), round(u.Write / Ops)}}
		r.Loads = append(r.Loads, l)
		r.PerOp = r.PerOp.add(l.Units)
	}
	r.PerOp = Units{round(r.PerOp.Read), round(r.PerOp.Write)}
	r.ProjectorInvocations = round(float64(invocations) / Ops)
	r.DollarsPerMillion = round(prices.PerMillion(r.PerOp.Read, r.PerOp.Write) + 1e6*r.ProjectorInvocations*prices.LambdaRequest)
	slices.SortFunc(r.Loads, cmpLoads)
	if len(r.Loads) > 0 {
		r.Sustained, r.LimitedBy = round(r.Loads[0].Rate()), r.Loads[0].Key.String()
	}
	return r
}
