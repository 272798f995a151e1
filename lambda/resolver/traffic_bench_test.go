package resolver_test

import (
	"context"
	"io"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/traffic"
)

// trafficStore serves what the benchmarked fields read from memory; the
// prefetch functions are the real store's (they make no request).
type trafficStore struct {
	*store.Store
	memoryUsers
}

// Users resolves the ambiguity between the two embedded Users.
func (m trafficStore) Users(ctx context.Context, ids []string) (map[string]store.User, error) {
	return m.memoryUsers.Users(ctx, ids)
}

func (m trafficStore) Post(_ context.Context, id string) (store.Post, error) {
	return traffic.Post(0), nil
}

// BenchmarkTraffic reports, per event, what the handler costs on traffic
// shaped like AppSync's: decoding alone, the whole handler with the store in
// memory (JSON in and out included), with and without the answers for child
// fields, and encoding the reply alone (what the handler does after
// resolving: appending each result, a user without reflection, a page
// passed through from the source as it is).
func BenchmarkTraffic(b *testing.B) {
	mem := trafficStore{Store: store.New(nil, "t", cursor.New([]byte("k"))), memoryUsers: memoryUsers{}}
	for _, u := range authors() {
		mem.memoryUsers[u.ID] = u
	}
	rh := resolver.New(mem, quietLog(), resolver.WithCostLog(io.Discard))
	h := lambda.NewHandler(rh)
	// Without answers, as with direct resolvers on every field: the figures
	// before the JavaScript child resolvers, where a reply answers no child.
	rdirect := resolver.New(mem, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithoutAnswers())
	direct := lambda.NewHandler(rdirect)
	for _, c := range traffic.Cases() {
		perEvent := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Events), "ns/event")
			b.ReportMetric(float64(len(c.Payload)), "payload-B")
		}
		b.Run(c.Name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := appsync.Decode(c.Payload); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
		reply, err := h.Invoke(context.Background(), c.Payload)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.Name+"/handler", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := h.Invoke(context.Background(), c.Payload); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
		b.Run(c.Name+"/handler-without-answers", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := direct.Invoke(context.Background(), c.Payload); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
		})
		// Encoding alone is measured without answers: with them, the
		// objects answered are encoded as their answers are attached.
		reply, err = direct.Invoke(context.Background(), c.Payload)
		if err != nil {
			b.Fatal(err)
		}
		encode, err := rdirect.Resolved(context.Background(), c.Payload)
		if err != nil {
			b.Fatal(err)
		}
		if again, err := encode(); err != nil || string(again) != string(reply) {
			b.Fatalf("encoding the resolved events again gives another reply (%v)", err)
		}
		b.Run(c.Name+"/encode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := encode(); err != nil {
					b.Fatal(err)
				}
			}
			perEvent(b)
			b.ReportMetric(float64(len(reply)), "reply-B")
		})
	}
}
