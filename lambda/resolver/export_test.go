package resolver

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// Decode decodes payload as Invoke does (with the speed-up, where installed).
func (h *Handler) Decode(payload []byte) ([]appsync.Event, bool, error) { return h.decode(payload) }

// Resolved resolves payload as Invoke does, answers included, and returns
// a function that encodes the reply, as Invoke does, each time it is called:
// the traffic benchmark measures encoding alone with it.
func (h *Handler) Resolved(ctx context.Context, payload []byte) (encode func() ([]byte, error), err error) {
	events, batch, err := h.decode(payload)
	if err != nil {
		return nil, err
	}
	ptrs := make([]*appsync.Event, len(events))
	for i := range events {
		ptrs[i] = &events[i]
	}
	results := h.resolve(ctx, ptrs)
	h.answerChildren(ctx, ptrs, results, halfway(ctx, time.Now()))
	return func() ([]byte, error) { return h.reply(events, results, batch) }, nil
}

// CostLine is the cost line an invocation writes (see logCost), as the
// tests read it back.
type CostLine struct {
	Time  time.Time
	Level string
	Msg   string
	AWS   struct {
		Timestamp         int64
		CloudWatchMetrics []struct {
			Namespace  string
			Dimensions [][]string
			Metrics    []struct{ Name, Unit string }
		}
	} `json:"_aws"`
	RequestID          string `json:"RequestId"`
	ColdStart          bool
	Field              string
	BatchSize          int
	DynamoDBRequests   int
	Requests           map[string]int
	ReadCapacityUnits  float64
	WriteCapacityUnits float64
	Duration           float64
}

// ReadCostLines reads the cost lines in log, one per line, refusing any
// member the type does not know.
func ReadCostLines(log string) ([]CostLine, error) {
	var lines []CostLine
	for _, l := range strings.Split(strings.TrimSuffix(log, "\n"), "\n") {
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		var line CostLine
		if err := dec.Decode(&line); err != nil {
			return nil, err
		}
		lines = append(lines, line)
	}
	return lines, nil
}
