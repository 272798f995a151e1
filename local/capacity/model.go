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
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/routes"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/prices"
	"github.com/example/appsync-dynamo/local/sample"
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

// Workload is one operation repeated at a rate: what the model sizes.
type Workload struct {
	Name string
	Goal float64 // operations a second the design must sustain
	// Op runs the operation once as actor (the i-th of Ops users).
	Op func(ctx context.Context, e *Env, actor string) error
}

// Env is a table on DynamoDB Local holding the workloads' data, with a
// store whose requests are recorded, and the local AppSync over it.
type Env struct {
	Store *store.Store
	Rec   *Recorder
	Exec  *executor.Executor
	// Largest is a post of the largest size (a 200-character title and a
	// 20,000-character body of four-byte characters), by bob, with 20
	// comments.
	Largest string
	// Popular is the author of the seed's query (50 posts, 20 comments each).
	Popular string
}

// Actor is the name of the i-th user an operation runs as.
func Actor(i int) string { return fmt.Sprintf("u_actor%03d", i) }

// NewEnv loads the workloads' data into table (created by the caller) and
// records the store's requests to it.
func NewEnv(ctx context.Context, client *dynamodb.Client, table string) (*Env, error) {
	d := sample.Blog(50, 20, 30)
	const four, stamp = "\U0001F600", "2006-01-02T15:04:05.000Z"
	at := time.Date(2024, 6, 1, 8, 0, 0, 0, time.UTC)
	id := func(t time.Time) string {
		return ulid.MustNew(ulid.Timestamp(t), bytes.NewReader(make([]byte, 10))).String()
	}
	largest := store.Post{ID: id(at), AuthorID: sample.Bob, Title: strings.Repeat(four, 200), Body: strings.Repeat(four, 20000),
		CreatedAt: at.Format(stamp), UpdatedAt: at.Format(stamp), Status: store.StatusPublished, CommentCount: 20}
	d.Posts = append(d.Posts, largest)
	for i := range 20 {
		c := at.Add(time.Duration(i+1) * time.Minute)
		d.Comments = append(d.Comments, store.Comment{ID: id(c), PostID: largest.ID, AuthorID: fmt.Sprintf("u_reader%02d", i+1), Body: "A comment.", CreatedAt: c.Format(stamp)})
	}
	for i := range Ops {
		d.Users = append(d.Users, store.User{ID: Actor(i), Handle: fmt.Sprintf("actor%03d", i), Name: fmt.Sprintf("Actor %d", i), CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	for i := range d.Users {
		if d.Users[i].ID == sample.Bob {
			d.Users[i].PostCount++
		}
	}
	tokens := cursor.New([]byte(cursor.DevelopmentKey))
	if err := store.New(client, table, tokens).Load(ctx, d); err != nil {
		return nil, err
	}
	rec := NewRecorder(client, table)
	s := store.New(rec, table, tokens)
	sch, err := schema.Load()
	if err != nil {
		return nil, err
	}
	quiet := slog.New(slog.NewJSONHandler(io.Discard, nil))
	exec := executor.New(sch, lambda.NewHandler(resolver.New(s, quiet, resolver.WithCostLog(io.Discard))), routes.All)
	return &Env{Store: s, Rec: rec, Exec: exec, Largest: largest.ID, Popular: sample.Alice}, nil
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
	return []Workload{
		{"comments on one post of the largest size", 1000, func(ctx context.Context, e *Env, actor string) error {
			_, err := e.Store.CreateComment(ctx, actor, e.Largest, "A comment.")
			return err
		}},
		{"likes on one post", 10000, func(ctx context.Context, e *Env, actor string) error {
			_, err := e.Store.LikePost(ctx, actor, e.Largest, []string{"id", "likeCount"})
			return err
		}},
		{"new followers of one user", 10000, func(ctx context.Context, e *Env, actor string) error {
			_, err := e.Store.Follow(ctx, actor, e.Popular)
			return err
		}},
		{"readers of one post's page (post, first 20 comments with authors, likeCount, likedByMe)", 10000, func(ctx context.Context, e *Env, actor string) error {
			return e.Query(ctx, actor, `{ post(id: "`+e.Largest+`") { title body likeCount likedByMe comments(limit: 20) { items { body author { name } } } } }`)
		}},
		{"the seed's query for one popular author", 1000, func(ctx context.Context, e *Env, actor string) error {
			return e.Query(ctx, actor, `{ user(id: "`+e.Popular+`") { name posts(limit: 10) { items { title comments { items { body author { name } } } } } } }`)
		}},
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

// Result is a workload as the model sizes it.
type Result struct {
	Name      string  `json:"name"`
	Goal      float64 `json:"goal"`      // operations a second
	Sustained float64 `json:"sustained"` // operations a second with no partition over its limit
	LimitedBy string  `json:"limitedBy"` // the partition key that sets it
	PerOp     Units   `json:"perOperation"`
	// DollarsPerMillion is what a million operations cost in on-demand
	// request units (package prices).
	DollarsPerMillion float64 `json:"dollarsPerMillion"`
	Loads             []Load  `json:"-"` // by partition, the hottest first
}

// Recorded is the requests a workload made, Ops operations of it.
type Recorded struct {
	Workload Workload
	Requests []Request
}

// Run runs each workload Ops times, each by another actor, recording its
// requests.
func Run(ctx context.Context, e *Env, workloads []Workload) ([]Recorded, error) {
	var out []Recorded
	e.Rec.Take()
	for _, w := range workloads {
		r := Recorded{Workload: w}
		for i := range Ops {
			if err := w.Op(ctx, e, Actor(i)); err != nil {
				return nil, fmt.Errorf("%s: %w", w.Name, err)
			}
			r.Requests = append(r.Requests, e.Rec.Take()...)
		}
		out = append(out, r)
	}
	return out, nil
}

// Cost costs each recorded workload by rules.
func Cost(recorded []Recorded, rules Rules) []Result {
	var results []Result
	for _, rec := range recorded {
		byKey := map[Key]Units{}
		for _, req := range rec.Requests {
			for k, u := range rules.Cost(req) {
				byKey[k] = byKey[k].add(u)
			}
		}
		results = append(results, size(rec.Workload, byKey))
	}
	return results
}

// round drops the float error of sums of halves and quarters.
func round(u float64) float64 { return math.Round(u*1e6) / 1e6 }

func size(w Workload, byKey map[Key]Units) Result {
	r := Result{Name: w.Name, Goal: w.Goal, Sustained: math.Inf(1)}
	for k, u := range byKey {
		l := Load{k, Units{round(u.Read / Ops), round(u.Write / Ops)}}
		r.Loads = append(r.Loads, l)
		r.PerOp = r.PerOp.add(l.Units)
	}
	r.PerOp = Units{round(r.PerOp.Read), round(r.PerOp.Write)}
	r.DollarsPerMillion = round(prices.PerMillion(r.PerOp.Read, r.PerOp.Write))
	slices.SortFunc(r.Loads, func(a, b Load) int {
		return cmp.Or(cmp.Compare(a.Rate(), b.Rate()), strings.Compare(a.Key.String(), b.Key.String()))
	})
	if len(r.Loads) > 0 {
		r.Sustained, r.LimitedBy = round(r.Loads[0].Rate()), r.Loads[0].Key.String()
	}
	return r
}
