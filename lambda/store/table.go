package store

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
