package hotkeys_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/local/streamtest"
)

// streamTest is a table with its stream, and the projector (no projection:
// the hot keys' tallies alone) applying what Drain reads of it.
type streamTest struct{ *streamtest.Projected }

func newStreamTest(t *testing.T) *streamTest {
	return &streamTest{streamtest.NewProjected(t, hotkeys.StreamFilters)}
}
