package ddblocal

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Client returns a DynamoDB client for the DynamoDB Local at endpoint, with
// dummy credentials, the store's retry bounds and the cost middleware
// installed (so cost.WithMeter counts its requests).
func Client(endpoint string, optFns ...func(*dynamodb.Options)) *dynamodb.Client {
	cfg := aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	}
	return dynamodb.NewFromConfig(cfg, append([]func(*dynamodb.Options){store.ClientOptions, func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String(endpoint)
		o.DisableValidateResponseChecksum = true // DynamoDB Local sends no CRC32 on errors
		o.APIOptions = append(o.APIOptions, cost.Middleware)
	}}, optFns...)...)
}
