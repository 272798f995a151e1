package realtime_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/realtime"
)

// docs/live.md states AppSync's filter limits as the local AppSync enforces
// them.
func TestTheDocsStateTheFilterLimits(t *testing.T) {
	doc, err := os.ReadFile("../../docs/live.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, says := range []string{
		fmt.Sprintf("at most %d filters in a group", realtime.MaxFilters),
		fmt.Sprintf("%d conditions in a filter", realtime.MaxConditions),
		fmt.Sprintf("%d levels and %d characters in a field path", realtime.MaxPathDepth, realtime.MaxPathLength),
		fmt.Sprintf("%d values of `in` or `notIn`, %d of `containsAny`", realtime.MaxInValues, realtime.MaxContainsAnyValues),
	} {
		if !strings.Contains(text, says) {
			t.Errorf("docs/live.md does not say %q", says)
		}
	}
}
