package main // feature: probe

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/probe"
	"github.com/example/appsync-dynamo/local/proc"
)

// The reading: SELECTION_READING when set; else the probe's verdict, read
// from the parameter SELECTION_READING_PARAMETER names with a signed
// GetParameter (first-occurrence until then, and while it is missing);
// else first-occurrence.
func TestTheReadingIsNamedOrTheProbesVerdict(t *testing.T) {
	var asked atomic.Int32
	var verdict atomic.Value
	verdict.Store("")
	ssm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ Name string }
		json.NewDecoder(r.Body).Decode(&in)
		asked.Add(1)
		v := verdict.Load().(string)
		switch {
		case r.Header.Get("X-Amz-Target") != "AmazonSSM.GetParameter" || !strings.Contains(r.Header.Get("Authorization"), "/eu-west-1/ssm/aws4_request"):
			w.WriteHeader(http.StatusForbidden)
		case in.Name != "/stack/selection-reading" || v == "":
			w.WriteHeader(http.StatusBadRequest)
			io.WriteString(w, `{"__type":"ParameterNotFound","message":""}`)
		default:
			json.NewEncoder(w).Encode(map[string]any{"Parameter": map[string]string{"Name": in.Name, "Value": v}})
		}
	}))
	defer ssm.Close()
	env := map[string]string{"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s", "AWS_ENDPOINT_URL_SSM": ssm.URL}
	getenv := func(k string) string { return env[k] }
	cfg, err := awsenv.Config(getenv)
	if err != nil {
		t.Fatal(err)
	}
	var logged proc.Output
	log := slog.New(slog.NewJSONHandler(&logged, nil))
	reading := func() func() appsync.Reading {
		t.Helper()
		r, err := readingOf(getenv, log, probe.FromParameter(cfg, getenv, log))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := reading()(); r != appsync.FirstOccurrence || asked.Load() != 0 {
		t.Errorf("neither set: %v, %d reads", r, asked.Load())
	}
	env["SELECTION_READING_PARAMETER"] = "/stack/selection-reading"
	verdict.Store("every-occurrence")
	told := reading()
	for deadline := time.Now().Add(5 * time.Second); told() != appsync.EveryOccurrence; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the parameter's every-occurrence not read in 5 s (%d reads)", asked.Load())
		}
	}
	if lines := logged.String(); strings.Count(lines, `"msg":"selection reading","reading":"every-occurrence","source":"probed"`) != 1 ||
		strings.Count(lines, `"msg":"selection reading","reading":"first-occurrence","source":"default"`) != 1 {
		t.Errorf("the log, without one line for each environment's reading (the dashboard counts them):\n%s", lines)
	}
	verdict.Store("")
	missing := reading()
	for deadline := time.Now().Add(5 * time.Second); asked.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the parameter not read")
		}
	}
	if r := missing(); r != appsync.FirstOccurrence {
		t.Errorf("a missing parameter: %v", r)
	}
	env["SELECTION_READING"] = "every-occurrence"
	before := asked.Load()
	if r := reading()(); r != appsync.EveryOccurrence || asked.Load() != before {
		t.Errorf("SELECTION_READING set: %v, %d more reads", r, asked.Load()-before)
	}
	env["SELECTION_READING"] = "every"
	if _, err := readingOf(getenv, log, probe.FromParameter(cfg, getenv, log)); err == nil {
		t.Error("SELECTION_READING=every: no error")
	}
}
