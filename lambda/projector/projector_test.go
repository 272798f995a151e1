package projector_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/local/storetest"
)

// streamTest is a table with its stream, and the projector (no projection:
// its own tallies) applying what Drain reads of it.
type streamTest struct{ *storetest.Projected }

func newStreamTest(t *testing.T) *streamTest {
	return &streamTest{storetest.NewProjected(t, projector.StreamFilters)}
}
