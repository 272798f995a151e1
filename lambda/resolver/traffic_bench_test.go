package resolver_test

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/nodebaseline"
	"github.com/example/appsync-dynamo/local/traffic"
)

// BenchmarkTraffic reports, per event, what the handler costs on traffic
// shaped like AppSync's: decoding alone, the whole handler with the store in
// memory (JSON in and out included), with and without the answers for child
// fields, and encoding the reply alone (what the handler does after
// resolving: appending each result, a user without reflection, a page
// passed through from the source as it is).
func BenchmarkTraffic(b *testing.B) {
	mem := traffic.NewStore()
	rh := resolver.New(mem, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence))
	h := lambda.NewHandler(rh)
	// Without answers, as with direct resolvers on every field: the figures
	// before the JavaScript child resolvers, where a reply answers no child.
	rdirect := resolver.New(mem, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence), resolver.WithoutAnswers())
	direct := lambda.NewHandler(rdirect)
	for _, c := range traffic.Cases() {
		perEvent := func(b *testing.B) {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Events), "ns/event")
			b.ReportMetric(float64(len(c.Payload)), "payload-B")
		}
		b.Run(c.Name+"/decode", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := rh.Decode(c.Payload); err != nil {
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
		// The baseline, in the same run (after the handler's figures: the
		// Node process never runs just before them): the same payload
		// resolved by a Node function written with Powertools
		// (local/nodebaseline), which does what the handler does without
		// answers. Its figure is Node's own timing of a second of resolving,
		// after half a second of warm-up.
		b.Run(c.Name+"/node-powertools", func(b *testing.B) {
			results, err := nodebaseline.Run(context.Background(), []traffic.Case{c}, time.Second)
			if err != nil {
				b.Fatalf("the Node baseline (make bench installs it and sets %s): %v", nodebaseline.ModulesEnv, err)
			}
			b.ReportMetric(results[0].NsPerOp/float64(c.Events), "ns/event")
			b.ReportMetric(float64(len(c.Payload)), "payload-B")
		})
	}
}
