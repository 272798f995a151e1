package smoke_test // feature: probe

import (
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// probedCases are TestSmokeAgainstMakeDev's cases where the probes tell
// which reading the local AppSync writes, and the check fails where the
// function would read more than AppSync writes.
var probedCases = []smokeCase{
	{appsync.EveryOccurrence, appsync.EveryOccurrence, false, "AppSync writes every occurrence's selection, as the function reads it"},
	{appsync.EveryOccurrence, appsync.FirstOccurrence, false, "the deployment's probe hands the function the cheaper reading"},
	{appsync.FirstOccurrence, appsync.FirstOccurrence, false, "AppSync writes the first occurrence's selection in 6 of 6 shapes"},
	{appsync.FirstOccurrence, appsync.EveryOccurrence, true, "FAIL AppSync writes the first occurrence's selection in 6 of 6 shapes"},
}

// probed fails unless the report shows what AppSync told each of the six
// shapes' probes, under c's reading.
func probed(t *testing.T, c smokeCase, report string) {
	t.Helper()
	if want := "selectionSetGraphQL " + c.appsync.String() + ", selectionSetList " + c.appsync.String(); strings.Count(report, want) != 6 {
		t.Errorf("report, without %q six times:\n%s", want, report)
	}
}
