package appsyncjs_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/payload"
)

// eslint returns the linter make test installs (APPSYNCJS_ESLINT), failing
// the test when it is missing: the lint must never be skipped silently.
func eslint(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("needs the linter, which make test installs: skipped under -short (make check)")
	}
	bin := os.Getenv("APPSYNCJS_ESLINT")
	if bin == "" {
		t.Fatal("APPSYNCJS_ESLINT is not set: run through make test, which installs the linter")
	}
	if _, err := os.Stat("node_modules"); err != nil {
		t.Fatalf("appsyncjs/node_modules (a link to the installed linter, made by make test): %v", err)
	}
	return bin
}

// lint runs the linter on file and returns the rules it reports.
func lint(t *testing.T, file string) []string {
	t.Helper()
	out, err := exec.Command(eslint(t), "--format", "json", file).Output()
	if _, failed := err.(*exec.ExitError); err != nil && !failed {
		t.Fatal(err)
	}
	var results []struct {
		Messages []struct {
			RuleID  string `json:"ruleId"`
			Message string `json:"message"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(out, &results); err != nil || len(results) != 1 {
		t.Fatalf("eslint output %q: %v", out, err)
	}
	var rules []string
	for _, m := range results[0].Messages {
		rules = append(rules, m.RuleID+": "+m.Message)
	}
	return rules
}

// The deployed resolvers pass AWS's rules for the APPSYNC_JS runtime.
func TestChildPassesTheRuntimesRules(t *testing.T) {
	for _, file := range []string{"child.js", "root.js"} {
		if problems := lint(t, file); len(problems) > 0 {
			t.Errorf("%s: %q", file, problems)
		}
	}
}

// The lint can fail: each construct the runtime rejects is reported.
func TestLintRejectsWhatTheRuntimeRejects(t *testing.T) {
	problems := lint(t, "testdata/rejected.js")
	if len(problems) != 4 {
		t.Errorf("rejected.js: %d problems %q, want 4 (try, while, ++, regex)", len(problems), problems)
	}
}

// TestSelectionLimitFitsTheEventReserve checks child.js's MAX_SELECTION
// against the Lambda's payload.EventReserve: a selection and variables of
// that many UTF-16 code units, each escaped to six bytes, plus the rest of a
// lean event (arguments, the caller's sub, the field's names: well under
// 2 kB for the schema's arguments) leave a full batch of the largest
// sources within Lambda's 6 MB, as the budgets assume.
func TestSelectionLimitFitsTheEventReserve(t *testing.T) {
	m := regexp.MustCompile(`(?m)^const MAX_SELECTION = (\d+);$`).FindStringSubmatch(appsyncjs.Child)
	if m == nil {
		t.Fatal("child.js declares no MAX_SELECTION")
	}
	units, _ := strconv.Atoi(m[1])
	if worst := 6*units + 2048; units <= 0 || worst > payload.EventReserve {
		t.Errorf("MAX_SELECTION %d: up to %d bytes an event, over payload.EventReserve %d", units, worst, payload.EventReserve)
	}
}
