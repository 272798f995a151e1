// Command probe is the deployment's selection probe, a CloudFormation
// custom resource (and a daily schedule) that asks the API how AppSync
// writes a merged field's selection (lambda/probe) and writes the verdict
// into the parameter the resolver function reads (docs/deploying.md).
package main // feature: probe

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/cfn"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/probe"
	"github.com/example/appsync-dynamo/lambda/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	r, err := newResource(os.Getenv, log)
	if err != nil {
		log.Error("refusing to start: " + err.Error())
		os.Exit(1)
	}
	lambda.Start(r.invoke)
}

// invoke answers CloudFormation's requests (the resource's create, update
// and delete) and the daily schedule's (an event with the resource's
// properties and no RequestType).
func (r *resource) invoke(ctx context.Context, e cfn.Event) error {
	if e.RequestType == "" {
		return r.daily(ctx, e)
	}
	_, err := cfn.LambdaWrap(r.handle)(ctx, e)
	return err
}

// resource is the custom resource's handler and what it needs.
type resource struct {
	cfg    aws.Config
	store  *store.Store
	ssm    awsenv.Service
	log    *slog.Logger
	client *dynamodb.Client
	table  string
	// namespace is the CloudWatch namespace of the daily run's metric
	// (METRICS_NAMESPACE, the stack's name); metrics is where its line goes.
	namespace string
	metrics   io.Writer
}

func newResource(getenv func(string) string, log *slog.Logger) (*resource, error) {
	table := getenv("TABLE_NAME")
	if table == "" {
		return nil, errors.New("TABLE_NAME is not set")
	}
	cfg, err := awsenv.Config(getenv)
	if err != nil {
		return nil, err
	}
	client := store.NewClient(cfg, awsenv.Endpoint(getenv, "DYNAMODB"))
	// The store signs no page token here: any key will do.
	return &resource{cfg: cfg, store: store.New(client, table, cursor.New(make([]byte, 32))), ssm: probe.SSM(awsenv.Endpoint(getenv, "SSM")),
		log: log, client: client, table: table, namespace: cmp.Or(getenv("METRICS_NAMESPACE"), "AppSyncDynamo"), metrics: os.Stdout}, nil
}

// props are the resource's properties.
type props struct{ GraphQLURL, Parameter, Pinned string }

func propsOf(e cfn.Event) (props, error) {
	str := func(k string) string { s, _ := e.ResourceProperties[k].(string); return s }
	p := props{GraphQLURL: str("GraphQLUrl"), Parameter: str("Parameter"), Pinned: str("Pinned")}
	if p.GraphQLURL == "" || p.Parameter == "" {
		return p, errors.New("the resource needs the properties GraphQLUrl and Parameter")
	}
	return p, nil
}

// handle answers CloudFormation: on create and update it probes and writes
// the verdict (the parameter's name is the resource's physical ID); on
// delete it deletes the parameter and any post a run cut short left, and
// never fails the stack's deletion.
func (r *resource) handle(ctx context.Context, e cfn.Event) (string, map[string]any, error) {
	p, err := propsOf(e)
	if e.RequestType == cfn.RequestDelete {
		if err == nil {
			err = r.call(ctx, "DeleteParameter", map[string]string{"Name": p.Parameter})
		}
		var api *awsenv.APIError
		if err != nil && !(errors.As(err, &api) && api.Type == "ParameterNotFound") {
			r.log.Warn("the selection probe's parameter was not deleted", "parameter", p.Parameter, "error", err)
		}
		if err := r.deletePost(ctx); err != nil { // one a run cut short left
			r.log.Warn("the selection probe's post was not deleted", "error", err)
		}
		return e.PhysicalResourceID, nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	verdict, shapes, err := probe.Decide(ctx, probe.Signed(r.cfg.HTTPClient, r.cfg, p.GraphQLURL), r.putPost, r.deletePost, p.Pinned)
	r.logShapes(shapes)
	if err != nil {
		return p.Parameter, nil, err
	}
	in := map[string]any{"Name": p.Parameter, "Value": verdict.String(), "Type": "String", "Overwrite": true,
		"Description": "How AppSync writes a merged field's selection, as the deployment's probe found it (lambda/probe)"}
	if err := r.call(ctx, "PutParameter", in); err != nil {
		return p.Parameter, nil, fmt.Errorf("writing the verdict %s: %w", verdict, err)
	}
	r.log.Info("selection reading", "verdict", verdict.String(), "parameter", p.Parameter)
	return p.Parameter, map[string]any{"Reading": verdict.String()}, nil
}

// daily runs the probes again and writes a changed verdict (first-occurrence
// where shapes disagree, unless pinned). It reports ProbeFailures for the
// stack's alarm and fails no invocation: a retry would find the same.
func (r *resource) daily(ctx context.Context, e cfn.Event) error {
	p, err := propsOf(e)
	verdict, failed := appsync.FirstOccurrence, true
	if err == nil {
		var shapes []probe.Shape
		verdict, shapes, err = probe.Decide(ctx, probe.Signed(r.cfg.HTTPClient, r.cfg, p.GraphQLURL), r.putPost, r.deletePost, p.Pinned)
		failed = err != nil
		if errors.Is(err, probe.ErrDisagree) && p.Pinned == "" {
			verdict, err = appsync.FirstOccurrence, nil
		}
		r.logShapes(shapes)
	}
	if err == nil {
		in := map[string]any{"Name": p.Parameter, "Value": verdict.String(), "Type": "String", "Overwrite": true}
		if err = r.call(ctx, "PutParameter", in); err != nil {
			failed = true
		}
	}
	return r.report(verdict, failed, err)
}

// report writes the daily run's line: its verdict, and the metric
// FailureMetric in CloudWatch's embedded metric format.
func (r *resource) report(verdict appsync.Reading, failed bool, err error) error {
	failures := 0
	if failed {
		failures = 1
	}
	now := time.Now()
	line := map[string]any{"time": now.Format(time.RFC3339Nano), "level": "INFO", "msg": "daily selection probe", "reading": verdict.String(),
		"_aws": map[string]any{"Timestamp": now.UnixMilli(), "CloudWatchMetrics": []map[string]any{{"Namespace": r.namespace,
			"Dimensions": [][]string{{probe.MetricDimension}}, "Metrics": []map[string]string{{"Name": probe.FailureMetric, "Unit": "Count"}}}}},
		probe.MetricDimension: probe.MetricFunction, probe.FailureMetric: failures}
	if err != nil {
		line["level"], line["error"] = "ERROR", err.Error()
	}
	b, _ := json.Marshal(line)
	_, werr := r.metrics.Write(append(b, '\n'))
	return werr
}

// logShapes logs what AppSync wrote for each shape probed.
func (r *resource) logShapes(shapes []probe.Shape) {
	for _, s := range shapes {
		r.log.Info("selection probe", "shape", s.Name, "field", s.Probed, "selectionSetGraphQL", s.Text.String(), "selectionSetList", s.List.String())
	}
}

func (r *resource) call(ctx context.Context, action string, in any) error {
	return awsenv.Call(ctx, r.cfg.HTTPClient, r.cfg, r.ssm, action, in, nil)
}

func (r *resource) putPost(ctx context.Context) error {
	return r.store.Load(ctx, store.Dataset{Posts: []store.Post{probe.Post}})
}

// deletePost deletes what putPost wrote: the post's item and its counter.
func (r *resource) deletePost(ctx context.Context) error {
	for _, sk := range []string{store.SKMetadata, store.SKCount} {
		key := store.Key{PK: store.PostPK(probe.Post.ID), SK: sk}
		if _, err := r.client.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: &r.table, Key: key.Attributes()}); err != nil {
			return err
		}
	}
	return nil
}
