package ddblocal

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/store"
)

// The table created from its definition (store.Schema), as the stack
// deploys it.

// WithoutStream returns s without its stream: for tables nothing reads the
// stream of (on DynamoDB Local, keeping one about doubles the time of every
// write).
func WithoutStream(s store.TableSchema) store.TableSchema {
	s.Stream = false
	return s
}

// CreateTableInput returns the request that creates a table named name with
// the schema s, billed on demand.
func CreateTableInput(s store.TableSchema, name string) *dynamodb.CreateTableInput {
	in := &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		KeySchema:   keySchema(s.Keys),
	}
	seen := map[string]bool{}
	addAttr := func(names ...string) {
		for _, n := range names {
			if !seen[n] {
				seen[n] = true
				in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{
					AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS,
				})
			}
		}
	}
	if s.Stream {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
	}
	addAttr(s.Keys.PartitionKey, s.Keys.SortKey)
	for _, ix := range s.Indexes {
		addAttr(ix.Keys.PartitionKey, ix.Keys.SortKey)
		in.GlobalSecondaryIndexes = append(in.GlobalSecondaryIndexes, types.GlobalSecondaryIndex{
			IndexName:  aws.String(ix.Name),
			KeySchema:  keySchema(ix.Keys),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		})
	}
	return in
}

func keySchema(k store.KeySchema) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(k.PartitionKey), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(k.SortKey), KeyType: types.KeyTypeRange},
	}
}
