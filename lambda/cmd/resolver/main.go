// Command resolver is the Lambda function behind every AppSync direct
// resolver of the API. Build it as `bootstrap` for the provided.al2023
// runtime (make build).
//
// Environment: TABLE_NAME (required); NEXT_TOKEN_KEY, the key that signs
// pagination tokens (required in Lambda; elsewhere a public development key
// is used, with a warning, when it is unset); AWS_ENDPOINT_URL_DYNAMODB to
// point the SDK at DynamoDB Local.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	table := os.Getenv("TABLE_NAME")
	if table == "" {
		log.Error("TABLE_NAME is not set")
		os.Exit(1)
	}
	key, err := tokenKey(os.Getenv)
	if err != nil {
		log.Error("refusing to start", "error", err)
		os.Exit(1)
	}
	if key == cursor.DevelopmentKey {
		log.Warn("NEXT_TOKEN_KEY is not set: signing pagination tokens with the public development key")
	}
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	client := dynamodb.NewFromConfig(cfg, store.ClientOptions, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, cost.Middleware)
		// DynamoDB Local sends no CRC32 header on errors.
		o.DisableValidateResponseChecksum = os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
	})
	lambda.Start(resolver.New(store.New(client, table, cursor.New([]byte(key))), log))
}

// tokenKey returns the key that signs pagination tokens. In Lambda (the
// runtime API is set) it must be configured and must not be the public
// development key, with which anyone could forge tokens; elsewhere (tests,
// make dev) the development key stands in for a missing one.
func tokenKey(getenv func(string) string) (string, error) {
	key := getenv("NEXT_TOKEN_KEY")
	inLambda := getenv("AWS_LAMBDA_RUNTIME_API") != ""
	switch {
	case inLambda && key == "":
		return "", errors.New("NEXT_TOKEN_KEY is not set: the function will not sign pagination tokens with the public development key")
	case inLambda && key == cursor.DevelopmentKey:
		return "", errors.New("NEXT_TOKEN_KEY is the public development key: set a secret one")
	case key == "":
		return cursor.DevelopmentKey, nil
	}
	return key, nil
}
