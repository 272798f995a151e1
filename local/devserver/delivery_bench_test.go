package devserver_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
)

// BenchmarkCommentDelivery measures, through make dev's API (the local
// AppSync, the Lambda's handler, DynamoDB Local, the real-time endpoint),
// the delay from a createComment request's start to each of 100
// subscribers receiving the comment: 10 comments an iteration, 1,000
// deliveries, reported as their median and p99, beside the median of the
// mutation's own answer (make bench).
func BenchmarkCommentDelivery(b *testing.B) {
	api := openSample(b)
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	url := srv.URL + "/graphql"
	const subscribers, perIteration = 100, 10
	clients := make([]*wsClient, subscribers)
	for i := range clients {
		clients[i] = connect(b, srv, devserver.Token("carol"))
		clients[i].start("c", onComment, map[string]any{"postId": sample.HelloPost})
		clients[i].next("start_ack")
	}
	const comment = `mutation C($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id body postId author { handle } } }`
	var delays, writes []time.Duration
	b.ResetTimer()
	for range b.N {
		for j := range perIteration {
			start := time.Now()
			if r := postVars(b, url, devserver.Token("bob"), comment, map[string]any{"p": sample.HelloPost, "b": fmt.Sprint("comment ", j)}); len(r.Errors) > 0 {
				b.Fatal(r.Errors)
			}
			writes = append(writes, time.Since(start))
			for _, c := range clients {
				c.next("data")
				delays = append(delays, time.Since(start))
			}
		}
	}
	b.StopTimer()
	slices.Sort(delays)
	slices.Sort(writes)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(delays[len(delays)/2]), "ms-median")
	b.ReportMetric(ms(delays[len(delays)*99/100]), "ms-p99")
	b.ReportMetric(ms(writes[len(writes)/2]), "ms-write-median")
	b.ReportMetric(float64(len(delays)), "deliveries")
}

// BenchmarkCommentBesideLargeSubscriptions measures a createComment's
// answer through make dev's API with no subscriber, then with 40
// connections each subscribed to 2,500 aliases of the comment's body, at
// its largest (2,000 4-byte characters): each such message would be about
// 20 MB, past AppSync's 240 KB, and is dropped. The messages are built off
// the mutation's path, and one past the limit is given up as it passes it,
// so the two medians stay close (make bench).
func BenchmarkCommentBesideLargeSubscriptions(b *testing.B) {
	for _, subscribers := range []int{0, 40} {
		b.Run(fmt.Sprint(subscribers, " subscribers"), func(b *testing.B) {
			api := openSample(b)
			srv := httptest.NewServer(devserver.Handler(api))
			defer srv.Close()
			var aliases strings.Builder
			for i := range 2500 {
				fmt.Fprintf(&aliases, "b%d: body ", i)
			}
			for range subscribers {
				c := connect(b, srv, devserver.Token("carol"))
				c.start("c", `subscription S($postId: ID!) { onCreateComment(postId: $postId) { `+aliases.String()+`} }`, map[string]any{"postId": sample.HelloPost})
				c.next("start_ack")
			}
			const comment = `mutation C($p: ID!, $b: String!) { createComment(input: {postId: $p, body: $b}) { id body postId } }`
			body := strings.Repeat("😀", 2000)
			var writes []time.Duration
			b.ResetTimer()
			for range b.N {
				start := time.Now()
				if r := postVars(b, srv.URL+"/graphql", devserver.Token("bob"), comment, map[string]any{"p": sample.HelloPost, "b": body}); len(r.Errors) > 0 {
					b.Fatal(r.Errors)
				}
				writes = append(writes, time.Since(start))
			}
			b.StopTimer()
			api.Hub.Wait() // every message built, or given up past the limit
			slices.Sort(writes)
			b.ReportMetric(float64(writes[len(writes)/2].Microseconds())/1000, "ms-write-median")
			b.ReportMetric(float64(api.Hub.Dropped()), "dropped")
		})
	}
}
