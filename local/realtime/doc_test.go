package realtime_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/realtime"
)

// group writes n with a comma between thousands, as the docs do.
func group(n int) string {
	s := fmt.Sprint(n)
	if len(s) > 3 {
		s = s[:len(s)-3] + "," + s[len(s)-3:]
	}
	return s
}

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
		fmt.Sprintf("more than %d MB (`realtime.MaxPending`)", realtime.MaxPending>>20),
		fmt.Sprintf("AppSync's limit, %d KB (`realtime.MaxMessage`)", realtime.MaxMessage>>10),
		fmt.Sprintf("%s of the largest comments published in rounds of %d", group(comments), round),
		fmt.Sprintf("each of %s subscribers of a post", group(thousand)),
	} {
		if !strings.Contains(text, says) {
			t.Errorf("docs/live.md does not say %q", says)
		}
	}
}
