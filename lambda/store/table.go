package store

import (
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table's definition (keys, indexes, stream): the stack deploys it,
// and the local tools create it, from this one place.

// KeySchema names a partition key and a sort key attribute (both strings).
type KeySchema struct {
	PartitionKey string
	SortKey      string
}

// Index is a global secondary index projecting all attributes.
type Index struct {
	Name string
	Keys KeySchema
}

// TableSchema is the table's whole key design: the primary key and its global
// secondary indexes. It is the one definition that the tests, the local
// server and the CDK stack build the table from.
type TableSchema struct {
	Keys    KeySchema
	Indexes []Index
	// Stream, when true, keeps the table's stream of changes with old and
	// new images (NEW_AND_OLD_IMAGES), for projections of the table.
	Stream bool
}

// Schema is the production table design (docs/table.md#keys).
var Schema = TableSchema{
	Keys: KeySchema{PartitionKey: AttrPK, SortKey: AttrSK},
	Indexes: []Index{
		{Name: GSI1, Keys: KeySchema{PartitionKey: AttrGSI1PK, SortKey: AttrGSI1SK}},
		{Name: GSI2, Keys: KeySchema{PartitionKey: AttrGSI2PK, SortKey: AttrGSI2SK}},
	},
	Stream: true,
}

// WithoutStream returns the schema without its stream: for tables nothing
// reads the stream of (on DynamoDB Local, keeping one about doubles the
// time of every write).
func (s TableSchema) WithoutStream() TableSchema {
	s.Stream = false
	return s
}

// CreateTableInput returns the request that creates a table named name with
// this schema, billed on demand.
func (s TableSchema) CreateTableInput(name string) *dynamodb.CreateTableInput {
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

func keySchema(k KeySchema) []types.KeySchemaElement {
	return []types.KeySchemaElement{
		{AttributeName: aws.String(k.PartitionKey), KeyType: types.KeyTypeHash},
		{AttributeName: aws.String(k.SortKey), KeyType: types.KeyTypeRange},
	}
}
