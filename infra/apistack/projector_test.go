package apistack_test // feature: projector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/projector"
)

// drawsTheProjectorsMetrics fails t unless the dashboard's body draws each
// metric of the projector's cost line.
func drawsTheProjectorsMetrics(t *testing.T, body string) {
	t.Helper()
	for _, m := range projector.Metrics {
		if want := fmt.Sprintf(`\"%s\",\"%s\",\"%s\",\"projector\"`, projector.MetricsNamespace, m.Name, projector.MetricsDimension); !strings.Contains(body, want) {
			t.Errorf("the dashboard draws no projector metric %s (%s)", m.Name, want)
		}
	}
}
