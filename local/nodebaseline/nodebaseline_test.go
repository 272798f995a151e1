package nodebaseline_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"reflect"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/nodebaseline"
	"github.com/example/appsync-dynamo/local/traffic"
)

// TestSameWorkAsTheGoHandler checks that the baseline does what the Go
// handler does without answers: for every case of the traffic, Node's reply
// is the Go handler's (a batch item's data unwrapped: Powertools returns
// the values themselves).
func TestSameWorkAsTheGoHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the Node baseline's packages, which make test installs: skipped under -short (make check)")
	}
	h := resolver.New(traffic.NewStore(), slog.New(slog.NewJSONHandler(io.Discard, nil)), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence), resolver.WithoutAnswers())
	cases := traffic.Cases()
	results, err := nodebaseline.Run(context.Background(), cases, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cases {
		reply, err := h.Invoke(context.Background(), c.Payload)
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		var goReply, nodeReply any
		if err := json.Unmarshal(reply, &goReply); err != nil {
			t.Fatal(err)
		}
		if items, ok := goReply.([]any); ok {
			for k, item := range items {
				items[k] = item.(map[string]any)["data"]
			}
		}
		if err := json.Unmarshal(results[i].Reply, &nodeReply); err != nil {
			t.Fatal(err)
		}
		if results[i].Name != c.Name || !reflect.DeepEqual(goReply, nodeReply) {
			t.Errorf("%s: Node replied\n%.600s\nGo replied\n%.600s", c.Name, results[i].Reply, reply)
		}
		if results[i].NsPerOp <= 0 {
			t.Errorf("%s: %v ns per payload", c.Name, results[i].NsPerOp)
		}
	}
}
