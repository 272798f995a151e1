package apistack_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/infra/apistack"
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

// docs/deploying.md's price of the daily probe: thirty runs of an
// invocation of at most 3 s at the function's memory, six AppSync queries
// and four write units.
func TestTheDocsPriceTheDailyProbe(t *testing.T) {
	run := prices.LambdaRequest + 3*float64(apistack.MemoryMB)/1024*prices.LambdaArm64GBSecond + 6*prices.AppSyncOperation + 4*prices.DynamoDBWriteRequestUnit
	doc, err := os.ReadFile("../../docs/deploying.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	if want := fmt.Sprintf("(at most 3 s at %d MB), six AppSync queries and four write units (its post's two items written and deleted): $%.4f a month at most", apistack.MemoryMB, 30*run); !strings.Contains(text, want) {
		t.Errorf("docs/deploying.md does not say %q", want)
	}
}
