// Package endtoend measures a payload end to end, Go against Node: the same
// bytes resolved by the Go function (lambda.NewHandler's Invoke: decoded,
// resolved with its BatchGetItem or its Query, encoded) and by a Node
// function written with Powertools and the AWS SDK (nodebaseline.Peer:
// parsed, resolved with the same request, serialized), both against one
// DynamoDB Local table, interleaved call block by call block in one run, so that
// what the machine does meanwhile falls on both (make bench).
package endtoend

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/nodebaseline"
	"github.com/example/appsync-dynamo/local/traffic"
	"github.com/example/appsync-dynamo/local/wired"
)

// Cases are the payloads measured: the traffic's 100-event Post.author and
// Comment.author batches (30 and 20 distinct authors: one BatchGetItem),
// and a page of a post's 20 comments read with a Query.
func Cases() []traffic.Case {
	var out []traffic.Case
	for _, c := range traffic.Cases() {
		if c.Name == "Post.author/100" || c.Name == "Comment.author/100" {
			out = append(out, c)
		}
	}
	return append(out, traffic.CommentsQuery())
}

// Side is one function's calls of one case.
type Side struct {
	Calls  []time.Duration // every call, in order
	Rounds []time.Duration // each round's median
}

// Median, P95 and Min are of every call.
func (s Side) Median() time.Duration { return quantile(s.Calls, 0.5) }
func (s Side) P95() time.Duration    { return quantile(s.Calls, 0.95) }
func (s Side) Min() time.Duration    { return quantile(s.Calls, 0) }

// Spread is the widest round median over the narrowest.
func (s Side) Spread() float64 {
	return float64(slices.Max(s.Rounds)) / float64(slices.Min(s.Rounds))
}

// Result is one case, both functions, and the Go function under the safe
// reading.
type Result struct {
	Case     string
	Go, Node Side
	// Safe is the Go function reading the selection as first-occurrence
	// (the safe reading, right however AppSync writes a merged field): it
	// reads the users' counters too.
	Safe Side
	// Floor is DynamoDB Local's own answer to the batch's BatchGetItem,
	// asked in plain HTTP (no SDK, no handler): what both functions wait
	// for, whatever they do; SafeFloor its answer to the safe reading's
	// (the users' items and their counters).
	Floor, SafeFloor Side
	// GoReply, SafeReply and NodeReply are each one's last reply.
	GoReply, SafeReply, NodeReply []byte
}

// Functions are the functions of a run, on one table.
type Functions struct {
	Go, Safe lambda.Handler
	Node     *nodebaseline.Peer
	// floor asks DynamoDB Local for a case's users in plain HTTP, and
	// safeFloor for their counters too.
	floor, safeFloor func(ctx context.Context, c traffic.Case) error
}

// Start loads the traffic's users into table on the DynamoDB Local at
// endpoint (created here, with the production schema) and starts the
// functions on it: the Go handler as deployed under each selection reading
// (every occurrence: a selection without counts reads the user items alone,
// as the peer does; first occurrence, the safe reading: their counters
// too), the Node peer. Close the peer when done.
func Start(ctx context.Context, endpoint, table string) (Functions, error) {
	d := store.Dataset{Users: traffic.Users(), Posts: []store.Post{traffic.Post(0)}}
	for i := range 20 {
		d.Comments = append(d.Comments, traffic.Comment(0, i))
	}
	if err := ddblocal.Seed(ctx, endpoint, table, d); err != nil {
		return Functions{}, err
	}
	s := store.New(ddblocal.Client(endpoint), table, cursor.New([]byte(cursor.DevelopmentKey)), wired.Store...)
	log := slog.New(slog.NewJSONHandler(io.Discard, nil))
	handler := func(r appsync.Reading) lambda.Handler {
		return lambda.NewHandler(resolver.New(s, log, resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(r)))
	}
	peer, err := nodebaseline.StartPeer(ctx, endpoint, table)
	if err != nil {
		return Functions{}, err
	}
	return Functions{Go: handler(appsync.EveryOccurrence), Safe: handler(appsync.FirstOccurrence), Node: peer,
		floor: plainRequest(endpoint, table, store.SKMetadata), safeFloor: plainRequest(endpoint, table, store.SKMetadata, store.SKCount)}, nil
}

// Run measures each case over rounds of n calls a function, the two
// alternating which goes first, after a warm-up round.
func Run(ctx context.Context, f Functions, cases []traffic.Case, rounds, n int) ([]Result, error) {
	var out []Result
	for _, c := range cases {
		r := Result{Case: c.Name}
		for round := -1; round < rounds; round++ {
			var goCalls, nodeCalls []time.Duration
			var err error
			goSide := func() error {
				goCalls, r.GoReply, err = callGo(ctx, f.Go, c.Payload, n)
				return err
			}
			nodeSide := func() error {
				nodeCalls, r.NodeReply, err = f.Node.Resolve(c.Payload, n)
				return err
			}
			timed := func(call func() error) ([]time.Duration, error) {
				took := make([]time.Duration, n)
				for i := range n {
					start := time.Now()
					if err := call(); err != nil {
						return nil, err
					}
					took[i] = time.Since(start)
				}
				return took, nil
			}
			var floorCalls, safeFloorCalls, safeCalls []time.Duration
			floorSide := func() (err error) {
				floorCalls, err = timed(func() error { return f.floor(ctx, c) })
				return err
			}
			safeFloorSide := func() (err error) {
				safeFloorCalls, err = timed(func() error { return f.safeFloor(ctx, c) })
				return err
			}
			safeSide := func() error {
				safeCalls, r.SafeReply, err = callGo(ctx, f.Safe, c.Payload, n)
				return err
			}
			order := []func() error{goSide, nodeSide, safeSide, floorSide, safeFloorSide}
			if round%2 == 1 { // Node first, every other round
				order[0], order[1] = nodeSide, goSide
			}
			for _, side := range order {
				if err := side(); err != nil {
					return nil, fmt.Errorf("%s: %w", c.Name, err)
				}
			}
			if round < 0 {
				continue // warm-up
			}
			r.Go.Calls, r.Go.Rounds = append(r.Go.Calls, goCalls...), append(r.Go.Rounds, quantile(goCalls, 0.5))
			r.Node.Calls, r.Node.Rounds = append(r.Node.Calls, nodeCalls...), append(r.Node.Rounds, quantile(nodeCalls, 0.5))
			r.Floor.Calls, r.Floor.Rounds = append(r.Floor.Calls, floorCalls...), append(r.Floor.Rounds, quantile(floorCalls, 0.5))
			r.Safe.Calls, r.Safe.Rounds = append(r.Safe.Calls, safeCalls...), append(r.Safe.Rounds, quantile(safeCalls, 0.5))
			r.SafeFloor.Calls, r.SafeFloor.Rounds = append(r.SafeFloor.Calls, safeFloorCalls...), append(r.SafeFloor.Rounds, quantile(safeFloorCalls, 0.5))
		}
		out = append(out, r)
	}
	return out, nil
}

// callGo invokes h with payload n times, one after another, timing each.
func callGo(ctx context.Context, h lambda.Handler, payload []byte, n int) ([]time.Duration, []byte, error) {
	took := make([]time.Duration, n)
	var reply []byte
	for i := range n {
		start := time.Now()
		var err error
		if reply, err = h.Invoke(ctx, payload); err != nil {
			return nil, nil, err
		}
		took[i] = time.Since(start)
	}
	return took, reply, nil
}

func quantile(d []time.Duration, q float64) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1)+0.5)]
}

// Table writes the results as Markdown: per case, each function's median,
// 95th percentile, fastest call and spread of round medians, and Go's over
// Node's.
func Table(results []Result, rounds, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| Payload, end to end (%d rounds of %d calls each, interleaved) | Function | Median | p95 | Fastest | Round medians, widest / narrowest |\n", rounds, n)
	b.WriteString("|---|---|---:|---:|---:|---:|\n")
	ms := func(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/1e6) }
	for _, r := range results {
		for _, side := range []struct {
			name string
			s    Side
		}{{"Go", r.Go}, {"Node (Powertools, AWS SDK v3)", r.Node}, {"DynamoDB Local's answer alone (plain HTTP)", r.Floor},
			{"Go, first-occurrence (the safe reading)", r.Safe},
			{"DynamoDB Local's answer to the safe reading's request (plain HTTP)", r.SafeFloor}} {
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %.2f |\n", r.Case, side.name, ms(side.s.Median()), ms(side.s.P95()), ms(side.s.Min()), side.s.Spread())
		}
		fmt.Fprintf(&b, "| %s | Go / Node | %.2fx | %.2fx | %.2fx | |\n", r.Case,
			float64(r.Go.Median())/float64(r.Node.Median()), float64(r.Go.P95())/float64(r.Node.P95()), float64(r.Go.Min())/float64(r.Node.Min()))
		own := func(f, floor time.Duration) float64 { return float64(f - floor) }
		fmt.Fprintf(&b, "| %s | Go / Node, each over DynamoDB Local's answer | %.2fx | %.2fx | | |\n", r.Case,
			own(r.Go.Median(), r.Floor.Median())/own(r.Node.Median(), r.Floor.Median()), own(r.Go.P95(), r.Floor.P95())/own(r.Node.P95(), r.Floor.P95()))
		fmt.Fprintf(&b, "| %s | first-occurrence less every-occurrence: Go's, and DynamoDB Local's answer's | %s, %s | %s, %s | | |\n", r.Case,
			ms(r.Safe.Median()-r.Go.Median()), ms(r.SafeFloor.Median()-r.Floor.Median()), ms(r.Safe.P95()-r.Go.P95()), ms(r.SafeFloor.P95()-r.Floor.P95()))
	}
	return b.String()
}

// Markers delimit the table in the document.
const (
	Begin = "<!-- endtoend: make bench writes what follows -->"
	End   = "<!-- endtoend: end -->"
)

// WriteInto puts table, dated, between the markers of the document at path.
func WriteInto(path, table string, at time.Time) error {
	doc, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	i, j := strings.Index(string(doc), Begin), strings.Index(string(doc), End)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q", path, Begin, End)
	}
	out := string(doc[:i]) + Begin + "\n\nMeasured " + at.Format("2006-01-02") + " by `make bench`:\n\n" + table + "\n" + string(doc[j:])
	return os.WriteFile(path, []byte(out), 0o644)
}

// plainRequest returns the request the functions make of a case, in plain
// HTTP (DynamoDB Local does not check signatures), without their code: a
// batch's BatchGetItem of its distinct authors' items of the sort keys sks
// (the user's, and its counter's), a page's Query of the post's comments.
func plainRequest(endpoint, table string, sks ...string) func(context.Context, traffic.Case) error {
	client := &http.Client{}
	type request struct {
		target string
		body   []byte
	}
	requests := map[string]request{}
	for _, c := range Cases() {
		var events []struct {
			Source struct {
				ID       string `json:"id"`
				AuthorID string `json:"authorId"`
			} `json:"source"`
			Info struct{ FieldName string } `json:"info"`
		}
		json.Unmarshal(c.Payload, &events)
		if events[0].Info.FieldName == "comments" {
			requests[c.Name] = request{"Query", fmt.Appendf(nil, `{"TableName":%q,"KeyConditionExpression":"pk = :pk AND begins_with(sk, :c)",`+
				`"ExpressionAttributeValues":{":pk":{"S":%q},":c":{"S":%q}},"Limit":20}`, table, store.PostPK(events[0].Source.ID), store.CommentPrefix)}
			continue
		}
		seen := map[string]bool{}
		var keys []string
		for _, ev := range events {
			if id := ev.Source.AuthorID; !seen[id] {
				seen[id] = true
				for _, sk := range sks {
					keys = append(keys, fmt.Sprintf(`{"pk":{"S":%q},"sk":{"S":%q}}`, store.UserPK(id), sk))
				}
			}
		}
		requests[c.Name] = request{"BatchGetItem", fmt.Appendf(nil, `{"RequestItems":{%q:{"Keys":[%s]}}}`, table, strings.Join(keys, ","))}
	}
	return func(ctx context.Context, c traffic.Case) error {
		r := requests[c.Name]
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(r.body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/x-amz-json-1.0")
		req.Header.Set("X-Amz-Target", "DynamoDB_20120810."+r.target)
		req.Header.Set("X-Amz-Date", time.Now().UTC().Format("20060102T150405Z"))
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=local/20260101/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, Signature=0")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil && (resp.StatusCode != http.StatusOK || !bytes.Contains(body, []byte(`"Responses"`)) && !bytes.Contains(body, []byte(`"Items"`))) {
			err = fmt.Errorf("plain %s: %s %.200s", r.target, resp.Status, body)
		}
		return err
	}
}
