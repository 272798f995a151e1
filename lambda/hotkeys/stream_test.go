package hotkeys_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/local/storetest"
)

// streamTest is a table with its stream, and the projector (no projection:
// the hot keys' tallies alone) applying what Drain reads of it.
type streamTest struct{ *storetest.Projected }

func newStreamTest(t *testing.T) *streamTest {
	return &streamTest{storetest.NewProjected(t, hotkeys.StreamFilters)}
}
