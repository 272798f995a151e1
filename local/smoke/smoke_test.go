package smoke_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/realtime"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/smoke"
	"github.com/example/appsync-dynamo/local/storetest"
)

// TestSmokeAgainstMakeDev runs the first-deploy check against the local API,
// as make smoke URL=... does against make dev, under each reading of a merged
// field's selection: the probes tell which one the local AppSync writes, and
// the check fails where the function would read more than AppSync writes;
// each case's AppSync measures subscription messages by another reading,
// which the check tells.
func TestSmokeAgainstMakeDev(t *testing.T) {
	cases := []smokeCase{
		{appsync.EveryOccurrence, appsync.EveryOccurrence, false, "all checks passed"},
		{appsync.FirstOccurrence, appsync.FirstOccurrence, false, "all checks passed"},
	}
	cases = probedCases // feature: probe
	for i, c := range cases {
		t.Run(fmt.Sprintf("AppSync %s, the function %s", c.appsync, c.function), func(t *testing.T) {
			t.Parallel() // most of a case is waiting out a message its reading drops
			api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
				Table: fmt.Sprintf("smoke-%d-%d-%d", os.Getpid(), i, time.Now().UnixNano()), Data: sample.Data(), Reading: &c.appsync})
			if err != nil {
				t.Fatal(err)
			}
			messages := realtime.MessageReadings[i] // each case a reading of AppSync's 240 KB
			api.Hub.Messages = messages
			clientLimit := realtime.ClientLimits[i%len(realtime.ClientLimits)] // and of a client's message
			api.Hub.ClientLimit = clientLimit
			srv := httptest.NewServer(devserver.Handler(api))
			defer srv.Close()
			var out strings.Builder
			err = smoke.Run(t.Context(), smoke.Target{URL: srv.URL + "/graphql", Token: devserver.Token("smoke"), Reader: devserver.Token("smoke-reader"), Reading: c.function}, &out)
			report := out.String()
			if (err != nil) != c.fails {
				t.Fatalf("error %v, want one: %v\n%s", err, c.fails, report)
			}
			for _, live := range []string{"a follower subscribed to their feed received the post",
				"a subscription to the post's comments received the comment", "deleting the post ended the subscription"} {
				if !c.fails && !strings.Contains(report, live) {
					t.Errorf("report, without the live check %q:\n%s", live, report)
				}
			}
			if !strings.Contains(report, c.says) || !strings.Contains(report, "InvalidNextToken") ||
				strings.Contains(report, "all checks passed") == c.fails {
				t.Errorf("report, without %q:\n%s", c.says, report)
			}
			if want := fmt.Sprintf("client messages: at most %d bytes", clientLimit); !strings.Contains(report, want) {
				t.Errorf("report, without %q:\n%s", want, report)
			}
			if want := "subscription messages: " + messages.String() + " "; !strings.Contains(report, want) {
				t.Errorf("report, without %q:\n%s", want, report)
			}
			probed(t, c, report) // feature: probe
			t.Logf("report:\n%s", report)
		})
	}
}

// A smokeCase is a reading of AppSync's and of the function's, whether the
// check fails, and what its report says.
type smokeCase struct {
	appsync, function appsync.Reading
	fails             bool
	says              string
}
