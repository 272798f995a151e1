package resolver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
)

// TestAppendFloatAsEncodingJSON compares appendFloat with encoding/json on
// the values the metrics take and on the edges of its two formats.
func TestAppendFloatAsEncodingJSON(t *testing.T) {
	values := []float64{0, 0.5, 1, 1.5, 12.345, 1000000, 1e20, 1e21, 1.5e21, 1e-6, 9.99e-7, 1e-7, 1.234e-12, 5e-324, math.MaxFloat64, 0.001, 123456789.125}
	for _, v := range values {
		for _, f := range []float64{v, -v} {
			want, _ := json.Marshal(f)
			if got := appendFloat(nil, f); !bytes.Equal(got, want) {
				t.Errorf("appendFloat(%g) = %s, encoding/json writes %s", f, got, want)
			}
		}
	}
}

// TestCostLineIsOneJSONLine writes the cost line of a field whose name and
// request ID need escaping, and reads it back: one line, valid JSON, the
// members slog's JSON handler writes, the strings intact, the requests by
// operation.
func TestCostLineIsOneJSONLine(t *testing.T) {
	var buf bytes.Buffer
	h := New(store.New(nil, "t", nil), slog.New(slog.NewJSONHandler(io.Discard, nil)), WithCostLog(&buf), WithMetricsNamespace("Stack\"1"))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "id\n\u2028\"x"})
	sum := cost.Summary{Requests: map[string]int{"Query": 2, "BatchGetItem": 1}, Read: 1.5}
	field := "Post.<\"weird\">\n\xff"
	h.logCost(ctx, field, 3, sum, 1234567*time.Nanosecond)
	line := buf.String()
	if strings.Count(line, "\n") != 1 || !strings.HasSuffix(line, "\n") {
		t.Fatalf("not one line: %q", line)
	}
	lines, err := ReadCostLines(line)
	if err != nil {
		t.Fatalf("%v in %s", err, line)
	}
	got := lines[0]
	if got.Time.IsZero() || got.Level != "INFO" || got.Msg != "invocation" || got.AWS.Timestamp != got.Time.UnixMilli() ||
		got.AWS.CloudWatchMetrics[0].Namespace != "Stack\"1" || got.RequestID != "id\n\u2028\"x" || !got.ColdStart ||
		got.Field != "Post.<\"weird\">\n\ufffd" || got.BatchSize != 3 || got.DynamoDBRequests != 3 ||
		got.Requests["Query"] != 2 || got.Requests["BatchGetItem"] != 1 || got.ReadCapacityUnits != 1.5 || got.Duration != 1.234 {
		t.Errorf("read back %+v from %s", got, line)
	}
}
