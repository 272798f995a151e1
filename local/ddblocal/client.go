package ddblocal

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Client returns a DynamoDB client for the DynamoDB Local at endpoint, with
// dummy credentials, the store's retry bounds and the cost middleware
// installed (so cost.WithMeter counts its requests).
func Client(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	return dynamodb.NewFromConfig(localConfig(), append([]func(*dynamodb.Options){store.ClientOptions, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.DisableValidateResponseChecksum = true // DynamoDB Local sends no CRC32 on errors
		o.APIOptions = append(o.APIOptions, cost.Middleware)
	}}, optFns...)...)
}

// localConfig returns dummy credentials and the HTTP client of the
// function's requests (awsenv.HTTPClient: its bound on connections, its
// plain request bodies; awstls changes only TLS connections).
func localConfig() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient:  awsenv.HTTPClient(),
	}
}

// StreamsClient returns a DynamoDB Streams client for the DynamoDB Local at
// endpoint (which serves both APIs), with dummy credentials.
func StreamsClient(endpoint string) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(localConfig(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(endpoint) })
}

// StreamARN returns the ARN of table's stream.
func StreamARN(ctx context.Context, client *dynamodb.Client, table string) (string, error) {
	out, err := client.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return "", err
	}
	if out.Table.LatestStreamArn == nil {
		return "", fmt.Errorf("table %s has no stream", table)
	}
	return *out.Table.LatestStreamArn, nil
}

// Seed creates table on the DynamoDB Local at endpoint, with the production
// schema (store.Schema), and loads d into it.
func Seed(ctx context.Context, endpoint, table string, d store.Dataset) error {
	client := Client(endpoint)
	if _, err := client.CreateTable(ctx, CreateTableInput(store.Schema, table)); err != nil {
		return fmt.Errorf("create table %s: %w", table, err)
	}
	if err := store.New(client, table, cursor.New([]byte(cursor.DevelopmentKey))).Load(ctx, d); err != nil {
		return fmt.Errorf("load %s: %w", table, err)
	}
	return nil
}
