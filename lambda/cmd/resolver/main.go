// Command resolver is the Lambda function behind every AppSync direct
// resolver of the API, built as `bootstrap` (make build). Its environment
// (TABLE_NAME, the token key, METRICS_NAMESPACE, the selection reading and
// the features') is in docs/deploying.md#the-functions-environment.
package main

import (
	"cmp"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/budget" // feature: budget
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/feed"            // feature: feed
	"github.com/example/appsync-dynamo/lambda/hotkeys"         // feature: hotkeys
	"github.com/example/appsync-dynamo/lambda/hotpage"         // feature: hotpage
	"github.com/example/appsync-dynamo/lambda/internal/awstls" // speed-up: awstls
	"github.com/example/appsync-dynamo/lambda/live"            // feature: live
	"github.com/example/appsync-dynamo/lambda/probe"           // feature: probe
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending" // feature: trending
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	refuse := func(msg string, args ...any) {
		log.Error("refusing to start: "+msg, args...)
		os.Exit(1)
	}
	table := os.Getenv("TABLE_NAME")
	if table == "" {
		refuse("TABLE_NAME is not set")
	}
	cfg, err := awsenv.Config(os.Getenv,
		awstls.Install("dynamodb"), // speed-up: awstls
	)
	if err != nil {
		refuse(err.Error())
	}
	endpoint := awsenv.Endpoint(os.Getenv, "DYNAMODB")
	tokens, err := tokenCodec(cfg, os.Getenv, log)
	if err != nil {
		refuse(err.Error())
	}
	client := store.NewClient(cfg, endpoint, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, cost.Middleware)
	})
	s := store.New(client, table, tokens,
		hotkeys.Spread, // feature: hotkeys
	)
	namespace := cmp.Or(os.Getenv("METRICS_NAMESPACE"), resolver.DefaultMetricsNamespace)
	var probed func() appsync.Reading
	probed = probe.FromParameter(cfg, os.Getenv, log) // feature: probe
	reading, err := readingOf(os.Getenv, log, probed)
	if err != nil {
		refuse(err.Error())
	}
	lambda.Start(resolver.New(s, log, resolver.WithMetricsNamespace(namespace), resolver.WithSelectionReadingFrom(reading),
		resolver.WithFeature(must(budget.FromEnvironment(s, os.Getenv)).Feature()), // feature: budget
		resolver.WithFeature(feed.Feature(feed.NewTable(s))),                       // feature: feed
		resolver.WithFeature(trending.Feature(trending.NewBuckets(s))),             // feature: trending
		resolver.WithFeature(hotpage.Feature(s)),                                   // feature: hotpage
		resolver.WithFeature(live.Feature(s)),                                      // feature: live
		resolver.WithFeature(probe.Feature()),                                      // feature: probe
	))
}

// must returns v, or refuses to start with err (as main's refuse does).
func must[T any](v T, err error) T {
	if err != nil {
		slog.New(slog.NewJSONHandler(os.Stdout, nil)).Error("refusing to start: " + err.Error())
		os.Exit(1)
	}
	return v
}

// readingOf is how the handler reads merged fields' selections: as
// SELECTION_READING names, else as probed says (the deployment's probe's
// verdict, where it is wired in and handed over), else first-occurrence,
// which it logs ("selection reading": the stack's dashboard counts them).
func readingOf(getenv func(string) string, log *slog.Logger, probed func() appsync.Reading) (func() appsync.Reading, error) {
	name := getenv("SELECTION_READING")
	if name == "" && probed != nil {
		return probed, nil
	}
	r, err := appsync.ParseReading(name)
	source := "default"
	if name != "" {
		source = "pinned"
	}
	log.Info("selection reading", "reading", r.String(), "source", source)
	return func() appsync.Reading { return r }, err
}
