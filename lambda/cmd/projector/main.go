// Command projector is the Lambda function of the table's stream: the batch
// steps and projections wired in below (package projector), or the consumer
// PROJECTION names. Environment: TABLE_NAME, GRAPHQL_URL, PROJECTION and
// what package awsenv reads (docs/deploying.md).
package main // feature: projector

import (
	"cmp"
	"crypto/rand"
	"log/slog"
	"maps"
	"os"
	"slices"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/feed"            // feature: feed
	"github.com/example/appsync-dynamo/lambda/hotkeys"         // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/internal/awstls" // speed-up: awstls
	"github.com/example/appsync-dynamo/lambda/live"            // feature: live
	"github.com/example/appsync-dynamo/lambda/projector"       // feature: projector
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending" // feature: trending
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	table := os.Getenv("TABLE_NAME")
	if table == "" {
		log.Error("refusing to start: TABLE_NAME is not set")
		os.Exit(1)
	}
	cfg, err := awsenv.Config(os.Getenv,
		awstls.Install("dynamodb"), // speed-up: awstls
	)
	if err != nil {
		log.Error("refusing to start: " + err.Error())
		os.Exit(1)
	}
	endpoint := awsenv.Endpoint(os.Getenv, "DYNAMODB")
	client := store.NewClient(cfg, endpoint, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, cost.Middleware)
	})
	// The projector signs no pagination token: any key will do.
	s := store.New(client, table, cursor.New([]byte(rand.Text())),
		hotkeys.Spread, // feature: hotkeys
	)
	projections := wire(s, cfg, log)
	handler, ok := projections[cmp.Or(os.Getenv("PROJECTION"), "feed")]
	if !ok {
		log.Error("refusing to start: PROJECTION names no projection", "PROJECTION", os.Getenv("PROJECTION"), "projections", slices.Sorted(maps.Keys(projections)))
		os.Exit(1)
	}
	lambda.Start(handler)
}

// wire returns the handlers PROJECTION names, of the features wired in
// below, each writing through s (and calling the API with cfg's
// credentials): the projector ("feed") with their batch steps and
// projections, and the consumers of their own.
func wire(s *store.Store, cfg aws.Config, log *slog.Logger) map[string]any {
	var batches []projector.Batch
	batches = append(batches, hotkeys.NewTallies(s)) // feature: hotkeys
	var applied []projector.Projection
	applied = append(applied, feed.NewProjection(s))                                                                                       // feature: feed
	applied = append(applied, live.NewProjection(live.NewPushes(s), live.API(live.Signed(cfg.HTTPClient, cfg, os.Getenv("GRAPHQL_URL"))))) // feature: live
	projections := map[string]any{"feed": projector.New(log, batches, applied...).Handle}
	projections[trending.Projection] = trending.New(trending.NewBuckets(s), log).Handle // feature: trending
	return projections
}
