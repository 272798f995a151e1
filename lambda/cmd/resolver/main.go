// Command resolver is the Lambda function behind every AppSync direct
// resolver of the API. Build it as `bootstrap` for the provided.al2023
// runtime (make build).
//
// Environment: TABLE_NAME (required); NEXT_TOKEN_SECRET_ARN, the Secrets
// Manager secret holding the key that signs pagination tokens, read once at
// start-up (what the stack sets), or NEXT_TOKEN_KEY, the key itself (the
// emulator and make dev); one of them is required in Lambda, and elsewhere a
// public development key is used, with a warning, when both are unset;
// METRICS_NAMESPACE, the CloudWatch namespace of the cost metrics (the stack
// sets its name); AWS_ENDPOINT_URL_DYNAMODB to point the SDK at DynamoDB Local.
package main

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

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
	cfg, err := config.LoadDefaultConfig(context.Background())
	if err != nil {
		log.Error("load AWS config", "error", err)
		os.Exit(1)
	}
	if arn := os.Getenv("NEXT_TOKEN_SECRET_ARN"); arn != "" {
		key, err := secretKey(context.Background(), secretsmanager.NewFromConfig(cfg), arn)
		if err != nil {
			log.Error("refusing to start: cannot read the token key", "secret", arn, "error", err)
			os.Exit(1)
		}
		os.Setenv("NEXT_TOKEN_KEY", key)
	}
	key, err := tokenKey(os.Getenv)
	if err != nil {
		log.Error("refusing to start", "error", err)
		os.Exit(1)
	}
	if key == cursor.DevelopmentKey {
		log.Warn("NEXT_TOKEN_KEY is not set: signing pagination tokens with the public development key")
	}
	client := dynamodb.NewFromConfig(cfg, store.ClientOptions, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, cost.Middleware)
		// DynamoDB Local sends no CRC32 header on errors.
		o.DisableValidateResponseChecksum = os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") != ""
	})
	namespace := cmp.Or(os.Getenv("METRICS_NAMESPACE"), resolver.DefaultMetricsNamespace)
	lambda.Start(resolver.New(store.New(client, table, cursor.New([]byte(key))), log, resolver.WithMetricsNamespace(namespace)))
}

// secretReader is the part of the Secrets Manager client main uses.
type secretReader interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// secretKey reads the token key from the secret arn (its string value), once,
// at start-up, within 5 s.
func secretKey(ctx context.Context, sm secretReader, arn string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	out, err := sm.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &arn})
	if err != nil {
		return "", err
	}
	if out.SecretString == nil || *out.SecretString == "" {
		return "", errors.New("the secret has no string value")
	}
	return *out.SecretString, nil
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
