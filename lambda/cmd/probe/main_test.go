package main // feature: probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/probe"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// recorder stands in for an HTTP service and keeps what it was sent.
type recorder struct {
	mu   sync.Mutex
	sent []map[string]any // each body, with "target": the X-Amz-Target or the method
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body map[string]any
	json.NewDecoder(req.Body).Decode(&body)
	if body == nil {
		body = map[string]any{}
	}
	body["target"] = req.Header.Get("X-Amz-Target") + req.Method
	r.mu.Lock()
	r.sent = append(r.sent, body)
	r.mu.Unlock()
	io.WriteString(w, "{}")
}

func (r *recorder) all() []map[string]any {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]map[string]any(nil), r.sent...)
}

// The deployment's probe, its code as Lambda runs it (cfn.LambdaWrap,
// answering CloudFormation's response URL), run against the local AppSync
// under each reading: it finds the reading the local AppSync writes and
// writes it into the parameter, leaves no post behind, fails the deployment
// where the function is pinned to every-occurrence and AppSync writes less,
// and deletes the parameter with the stack.
func TestTheDeploymentsProbeAgainstTheLocalAppSync(t *testing.T) {
	for i, c := range []struct {
		appsync appsync.Reading
		pinned  string
		fails   string
	}{
		{appsync: appsync.EveryOccurrence},
		{appsync: appsync.FirstOccurrence},
		{appsync: appsync.FirstOccurrence, pinned: "every-occurrence", fails: "pinned to every-occurrence"},
		{appsync: appsync.EveryOccurrence, pinned: "first-occurrence"},
	} {
		t.Run(fmt.Sprintf("AppSync %s, pinned %q", c.appsync, c.pinned), func(t *testing.T) {
			endpoint := storetest.Endpoint(t)
			table := fmt.Sprintf("probe-%d-%d-%d", os.Getpid(), i, time.Now().UnixNano())
			api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: endpoint, Table: table, Data: sample.Data(), Reading: &c.appsync})
			if err != nil {
				t.Fatal(err)
			}
			graphql := httptest.NewServer(devserver.Handler(api))
			defer graphql.Close()
			ssm, cloudformation := &recorder{}, &recorder{}
			ssmURL, cfnURL := httptest.NewServer(ssm), httptest.NewServer(cloudformation)
			defer ssmURL.Close()
			defer cfnURL.Close()
			env := map[string]string{"TABLE_NAME": table, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local", // DynamoDB Local keeps a table per key and region
				"AWS_ENDPOINT_URL_DYNAMODB": endpoint, "AWS_ENDPOINT_URL_SSM": ssmURL.URL}
			r, err := newResource(func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
			if err != nil {
				t.Fatal(err)
			}
			handle := func(ctx context.Context, e cfn.Event) (string, error) { return "", r.invoke(ctx, e) }
			noPost := func(after string) {
				t.Helper()
				for _, sk := range []string{store.SKMetadata, store.SKCount} {
					key := store.Key{PK: store.PostPK(probe.Post.ID), SK: sk}
					out, err := r.client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: &table, Key: key.Attributes(), ConsistentRead: new(true)})
					if err != nil || out.Item != nil {
						t.Errorf("%v after %s: %v, %v", key, after, out.Item, err)
					}
				}
			}
			// A run cut short after its first step (its post written) is
			// followed by one that runs whole.
			if err := r.putPost(t.Context()); err != nil {
				t.Fatal(err)
			}
			props := map[string]any{"GraphQLUrl": graphql.URL + "/graphql", "Parameter": "/stack/selection-reading", "Pinned": c.pinned}
			if _, err := handle(t.Context(), cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r1", ResponseURL: cfnURL.URL, ResourceProperties: props}); err != nil {
				t.Fatal(err)
			}
			answers := cloudformation.all()
			if len(answers) != 1 || answers[0]["Status"] == nil {
				t.Fatalf("CloudFormation was sent %d answers", len(answers))
			}
			answer, puts := answers[0], ssm.all()
			if c.fails != "" {
				if answer["Status"] != "FAILED" || !strings.Contains(fmt.Sprint(answer["Reason"]), c.fails) || len(puts) != 0 {
					t.Errorf("answer %v, parameter calls %v; want FAILED, %q, no parameter written", answer, puts, c.fails)
				}
			} else {
				data, _ := answer["Data"].(map[string]any)
				if answer["Status"] != "SUCCESS" || answer["PhysicalResourceId"] != "/stack/selection-reading" || data["Reading"] != c.appsync.String() {
					t.Errorf("answer %v; want SUCCESS with Reading %s", answer, c.appsync)
				}
				if len(puts) != 1 || puts[0]["target"] != "AmazonSSM.PutParameterPOST" || puts[0]["Value"] != c.appsync.String() || puts[0]["Name"] != "/stack/selection-reading" {
					t.Errorf("parameter calls %v; want one PutParameter of %s", puts, c.appsync)
				}
			}
			noPost("the probe")
			// The stack deleted after a run cut short: its post goes too.
			if err := r.putPost(t.Context()); err != nil {
				t.Fatal(err)
			}
			if _, err := handle(t.Context(), cfn.Event{RequestType: cfn.RequestDelete, RequestID: "r2", PhysicalResourceID: "/stack/selection-reading",
				ResponseURL: cfnURL.URL, ResourceProperties: props}); err != nil {
				t.Fatal(err)
			}
			if all := ssm.all(); len(all) == 0 {
				t.Error("the delete deleted no parameter")
			} else if last := all[len(all)-1]; last["target"] != "AmazonSSM.DeleteParameterPOST" || last["Name"] != "/stack/selection-reading" {
				t.Errorf("after the delete, parameter calls %v", all)
			}
			if answers := cloudformation.all(); len(answers) != 2 || answers[1]["Status"] != "SUCCESS" {
				t.Errorf("the delete's answer: %v", answers)
			}
			noPost("the delete")
			// The daily run: the verdict written again, or a failure counted.
			var line strings.Builder
			r.metrics = &line
			before := len(ssm.all())
			if _, err := handle(t.Context(), cfn.Event{ResourceProperties: props}); err != nil {
				t.Fatal(err)
			}
			var daily map[string]any
			if err := json.Unmarshal([]byte(line.String()), &daily); err != nil {
				t.Fatalf("the daily run's line %q: %v", line.String(), err)
			}
			puts = ssm.all()[before:]
			wantFailures := map[bool]float64{true: 1}[c.fails != ""]
			if daily[probe.FailureMetric] != wantFailures || daily[probe.MetricDimension] != probe.MetricFunction || !strings.Contains(line.String(), `"Namespace":"AppSyncDynamo"`) ||
				(len(puts) == 1) == (c.fails != "") {
				t.Errorf("the daily run: %s, parameter calls %v; want %v failures, the verdict written unless it failed", line.String(), puts, wantFailures)
			}
		})
	}
}

// An AppSync whose shapes disagree (here: root fields written whole, the
// fields of objects in part): the deployment fails, naming the shapes; the
// daily run writes first-occurrence, right under both, and counts a
// failure; pinned to first-occurrence, neither fails.
func TestShapesThatDisagree(t *testing.T) {
	graphql := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct{ Query string }
		json.NewDecoder(r.Body).Decode(&req)
		seen := probe.Selection{SelectionSetGraphQL: "{ id title }", SelectionSetList: []string{"id", "title"}}
		if r.Header.Get(probe.Header) == "Post.comments" {
			seen = probe.Selection{SelectionSetGraphQL: "{ items { id } }", SelectionSetList: []string{"items", "items/id"}}
		}
		msg, _ := json.Marshal(seen)
		json.NewEncoder(w).Encode(probe.Response{Errors: []probe.Error{{ErrorType: probe.ErrorType, Message: string(msg)}}})
	}))
	defer graphql.Close()
	ssm, cloudformation := &recorder{}, &recorder{}
	ssmURL, cfnURL := httptest.NewServer(ssm), httptest.NewServer(cloudformation)
	defer ssmURL.Close()
	defer cfnURL.Close()
	endpoint := storetest.Endpoint(t)
	table := fmt.Sprintf("probe-disagree-%d-%d", os.Getpid(), time.Now().UnixNano())
	if err := ddblocal.Seed(t.Context(), endpoint, table, store.Dataset{}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"TABLE_NAME": table, "AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
		"AWS_ENDPOINT_URL_DYNAMODB": endpoint, "AWS_ENDPOINT_URL_SSM": ssmURL.URL}
	r, err := newResource(func(k string) string { return env[k] }, slog.New(slog.NewJSONHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	for _, pinned := range []string{"", "first-occurrence"} {
		props := map[string]any{"GraphQLUrl": graphql.URL, "Parameter": "/stack/selection-reading", "Pinned": pinned}
		before := len(cloudformation.all())
		if err := r.invoke(t.Context(), cfn.Event{RequestType: cfn.RequestCreate, RequestID: "r1", ResponseURL: cfnURL.URL, ResourceProperties: props}); err != nil {
			t.Fatal(err)
		}
		answer := cloudformation.all()[before]
		if pinned == "" && (answer["Status"] != "FAILED" || !strings.Contains(fmt.Sprint(answer["Reason"]), "an object's field written twice: first-occurrence")) ||
			pinned != "" && answer["Status"] != "SUCCESS" {
			t.Errorf("pinned %q: the deployment answered %v", pinned, answer)
		}
		var line strings.Builder
		r.metrics = &line
		puts := len(ssm.all())
		if err := r.invoke(t.Context(), cfn.Event{ResourceProperties: props}); err != nil {
			t.Fatal(err)
		}
		var daily map[string]any
		json.Unmarshal([]byte(line.String()), &daily)
		written := ssm.all()[puts:]
		wantFailures := 0.0
		if pinned == "" {
			wantFailures = 1
		}
		if daily[probe.FailureMetric] != wantFailures || len(written) != 1 || written[len(written)-1]["Value"] != "first-occurrence" {
			t.Errorf("pinned %q: the daily run %s wrote %v; want first-occurrence written, %v failures", pinned, line.String(), written, wantFailures)
		}
	}
}
