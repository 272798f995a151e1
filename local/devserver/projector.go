package devserver // feature: projector

import (
	"context"
	"encoding/json"
	"log/slog"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/live" // feature: live
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/streams"
	"github.com/example/appsync-dynamo/local/wired"
)

// projectorConsumer is the projector as the stack deploys it: the wired
// features' batch steps and projections, and those that call the API
// (through exec, as the projector's role), on the records their filters
// match.
func projectorConsumer(s *store.Store, log *slog.Logger, exec *executor.Executor) consumer {
	var calling []projector.Projection                                                                // the projections that call the API
	calling = append(calling, live.NewProjection(live.NewPushes(s), live.API(projectorCaller(exec)))) // feature: live
	return consumer{lambda.NewHandler(wired.Projector(s, log, calling...).Handle), streams.Config{
		BatchSize: projector.StreamBatchSize, MaxRetries: projector.StreamRetries, Filter: streams.Matches(wired.ProjectorFilters)}}
}

// projectorCaller sends GraphQL requests to the local AppSync as the
// projector's role: an IAM caller, through the executor, its variables as
// JSON carries them (a []string arrives as a list of strings).
func projectorCaller(exec *executor.Executor) func(ctx context.Context, query string, vars map[string]any) (int, []byte, error) {
	role := &appsync.Identity{AccountID: LocalAccount, UserArn: ProjectorRole, Username: "projector"}
	return func(ctx context.Context, query string, vars map[string]any) (int, []byte, error) {
		raw, err := json.Marshal(vars)
		if err != nil {
			return 0, nil, err
		}
		var sent map[string]any
		if err := json.Unmarshal(raw, &sent); err != nil {
			return 0, nil, err
		}
		body, err := json.Marshal(exec.Execute(ctx, executor.Request{Query: query, Variables: sent, Identity: role}))
		return 200, body, err
	}
}
