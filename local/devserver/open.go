package devserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/budget" // feature: budget
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/trending" // feature: trending
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/jsresolver"
	"github.com/example/appsync-dynamo/local/realtime"
	"github.com/example/appsync-dynamo/local/streams"
	"github.com/example/appsync-dynamo/local/wired"
	"github.com/example/appsync-dynamo/schema"
)

// Config describes a local API.
type Config struct {
	Endpoint string        // the DynamoDB Local URL
	Table    string        // a table to create
	Data     store.Dataset // loaded into it
	// Log receives the Lambda's warnings and errors (the cause of every
	// InternalError and Throttled); nil discards them.
	Log io.Writer
	// Console is the directory of the query page's npm packages (package
	// console); "" serves no page.
	Console string
	// Reading is how the local AppSync writes a merged field's selection and
	// the Lambda reads it (executor.WithSelectionReading and
	// resolver.WithSelectionReading); the zero value is make dev's:
	// appsync.EveryOccurrence.
	Reading *appsync.Reading
	// WritesPerMinute is each caller's write budget (package budget): 0 is
	// the stack's, budget.WritesPerMinute; a negative number, none.
	WritesPerMinute int
	// TrendingWindow is the tumbling window of the trending aggregator's
	// poller: 0 is the stack's, trending.StreamWindow (a minute), which make dev
	// runs; tests shorten it.
	TrendingWindow time.Duration
}

// API is a local API: the executor of its requests, and the hub of its
// subscriptions, to which the executor publishes every mutation's result.
type API struct {
	Exec    *executor.Executor
	Hub     *realtime.Hub
	Console string // see Config.Console
}

// loadTime bounds the load of Open's data.
const loadTime = 5 * time.Minute

// Open creates the table from store.Schema (the definition the stack uses),
// loads cfg.Data, and returns the API: an executor that invokes the real
// Lambda handler, wrapped as aws-lambda-go wraps it, for every routed field,
// and publishes mutations to the subscriptions.
func Open(ctx context.Context, cfg Config) (*API, error) {
	client := ddblocal.Client(cfg.Endpoint)
	if _, err := client.CreateTable(ctx, ddblocal.CreateTableInput(store.Schema, cfg.Table)); err != nil {
		return nil, fmt.Errorf("create table %s: %w", cfg.Table, err)
	}
	s := store.New(client, cfg.Table, cursor.New([]byte(cursor.DevelopmentKey)), wired.Store...)
	// A load may take past the 20 seconds the store gives a context with no
	// deadline: make dev's blog, or a test's thousands of follows, on a busy
	// DynamoDB Local whose writes to a table with a stream slow as its
	// streams' records pile up.
	load, cancel := context.WithTimeout(ctx, loadTime)
	defer cancel()
	if err := s.Load(load, cfg.Data); err != nil {
		return nil, fmt.Errorf("load sample data: %w", err)
	}
	sch, err := schema.Load(wired.SDL...)
	if err != nil {
		return nil, err
	}
	logOut := cfg.Log
	if logOut == nil {
		logOut = io.Discard
	}
	log := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reading := appsync.EveryOccurrence
	if cfg.Reading != nil {
		reading = *cfg.Reading
	}
	opts := append(wired.Options(s), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(reading))
	opts = append(opts, resolver.WithFeature(budget.New(s, budget.Setting(cfg.WritesPerMinute)).Feature())) // feature: budget
	h := resolver.New(s, log, opts...)
	hub := realtime.New(sch, identifyHeaders, executor.Authorized)
	exec := executor.New(sch, lambda.NewHandler(h), h.Routes().All(), executor.WithPublisher(hub), executor.WithSelectionReading(reading))
	hub.Resolve = subscriptionResolver(exec)
	if err := project(ctx, cfg, s, log, exec); err != nil {
		return nil, err
	}
	return &API{Exec: exec, Hub: hub, Console: cfg.Console}, nil
}

// ProjectorRole is the IAM role the local projector calls the local AppSync
// as, as the stack's projector function does.
const ProjectorRole = "arn:aws:sts::" + LocalAccount + ":assumed-role/Projector/projector"

// subscriptionResolver runs the resolver the stack deploys on a routed
// subscription field as a subscription starts (the executor's Subscribe):
// its GraphQL error refuses the subscription, its filters are the
// subscription's.
func subscriptionResolver(exec *executor.Executor) realtime.Resolve {
	return func(ctx context.Context, f *ast.Field, args map[string]any, caller *appsync.Identity) (realtime.Filters, error) {
		ext, err := exec.Subscribe(ctx, f.Name, args, caller)
		var refused *jsresolver.Error
		if errors.As(err, &refused) {
			return realtime.Filters{}, &realtime.Refusal{Type: refused.Type, Message: refused.Message}
		}
		return realtime.Filters{Filter: ext.SubscriptionFilter, Invalidation: ext.InvalidationFilter}, err
	}
}

// project starts the stream's consumers, as the stack's event source
// mappings run them (their settings, their filters), until ctx ends: the
// feed's projector (a post shows in its followers' feeds within a poll,
// 100 ms) and the trending aggregator (on the stack's window, unless
// cfg.TrendingWindow).
func project(ctx context.Context, cfg Config, s *store.Store, log *slog.Logger, exec *executor.Executor) error {
	arn, err := ddblocal.StreamARN(ctx, ddblocal.Client(cfg.Endpoint), cfg.Table)
	if err != nil {
		return err
	}
	for _, c := range []consumer{
		projectorConsumer(s, log, exec), // feature: projector
		{lambda.NewHandler(trending.New(trending.NewBuckets(s), log).Handle), streams.Config{BatchSize: trending.StreamBatchSize, MaxRetries: trending.StreamRetries, Filter: streams.Matches(trending.StreamFilters), Window: or(cfg.TrendingWindow, trending.StreamWindow)}}, // feature: trending
	} {
		c.config.Bisect, c.config.Timeout, c.config.Region = true, resolver.FunctionTimeout, "us-east-1"
		c.config.OnFailure = func(f streams.Failure) {
			log.Error("stream records given up on (the on-failure destination)", "shard", f.ShardID, "from", f.StartSequence, "to", f.EndSeq, "records", f.Records)
		}
		c.config.OnError = func(err error) { log.Warn("the stream's poll failed; polling again", "cause", err.Error()) }
		go streams.New(ddblocal.StreamsClient(cfg.Endpoint), arn, c.fn, c.config, &streams.Checkpoints{}).Run(ctx, 100*time.Millisecond)
	}
	return nil
}

// consumer is a consumer of the stream: its function and its event source.
type consumer struct {
	fn     streams.Function
	config streams.Config
}

// identifyHeaders is Identity for the authorization headers of a real-time
// connection or subscription: Authorization (a token), or none (API key).
func identifyHeaders(headers map[string]string) (*appsync.Identity, error) {
	for k, v := range headers {
		if strings.EqualFold(k, "Authorization") {
			return Identity(v, "127.0.0.1")
		}
	}
	return nil, nil
}

// or is v, or def when v is its zero value (a setting left to its default:
// a feature's, on the lines that wire it in).
func or[T comparable](v, def T) T { return cmp.Or(v, def) }
