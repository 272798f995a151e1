package devserver_test

import (
	"fmt"
	"net/http/httptest"
	"slices"
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
