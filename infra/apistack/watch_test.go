package apistack_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/prices"
)

// docs/deploying.md's figures of what the enhanced metrics cost follow from
// the stack: three metrics a resolver and a data source, at CloudWatch's
// price of a metric-month.
func TestTheDocsPriceTheEnhancedMetrics(t *testing.T) {
	tpl := synth(t, false)
	resolvers, sources := len(tpl.ofType("AWS::AppSync::Resolver")), len(tpl.ofType("AWS::AppSync::DataSource"))
	doc, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	for _, want := range []string{
		fmt.Sprintf("over the stack's %d resolvers, three the one data source", resolvers),
		fmt.Sprintf("with every resolver in use, $%.2f a month, and $%.2f a month more for each operation name", float64(3*(resolvers+sources))*prices.CloudWatchMetricMonth, 3*prices.CloudWatchMetricMonth),
		fmt.Sprintf("$%.2f a metric-month", prices.CloudWatchMetricMonth),
	} {
		if !strings.Contains(text, want) || sources != 1 {
			t.Errorf("docs/deploying.md does not say %q (%d data sources)", want, sources)
		}
	}
}
