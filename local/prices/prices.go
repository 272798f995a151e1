// Package prices holds the AWS prices the project turns its measured
// counts into dollars with: one place, each with its source and the date it
// was read. Region us-east-1 (N. Virginia); list prices, before free tiers
// and discounts.
package prices

// Read on 2026-12-01 from the stored copy of the DynamoDB on-demand pricing
// page (AWS, "Amazon DynamoDB pricing: on-demand capacity", Standard table
// class), as reduced in November 2024: a read request unit is a strongly
// consistent read of up to 4 KB (half for eventually consistent), a write
// request unit a write of up to 1 KB (twice for transactional requests):
// the same counting as capacity units.
const (
	DynamoDBReadRequestUnit  = 0.125 / 1e6 // dollars per read request unit
	DynamoDBWriteRequestUnit = 0.625 / 1e6 // dollars per write request unit
)

// PerMillion is what a million operations cost in DynamoDB request units,
// each operation consuming read and write units.
func PerMillion(read, write float64) float64 {
	return 1e6 * (read*DynamoDBReadRequestUnit + write*DynamoDBWriteRequestUnit)
}

// Read on 2026-12-01 from stored copies of the AWS Lambda pricing page
// (AWS, "AWS Lambda pricing", and its Arm row as republished): a request
// costs the same on both architectures; duration on arm64, the first
// 7.5 billion GB-seconds a month.
const (
	LambdaRequest       = 0.20 / 1e6   // dollars per invocation
	LambdaArm64GBSecond = 0.0000133334 // dollars per GB-second of duration
)

// Read on 2026-12-01 from the stored copy of the AWS AppSync pricing page
// (AWS, "AWS AppSync pricing"): query and data modification operations,
// $4.00 per million (data transfer out, at the EC2 rate, is not counted).
const AppSyncOperation = 4.00 / 1e6 // dollars per query or mutation

// Read on 2026-12-05 from stored copies of the AWS AppSync pricing page
// (AWS, "AWS AppSync pricing", AppSync GraphQL): real-time updates, each
// message delivered to a subscriber (and each WebSocket operation, such as
// a connection), $2.00 per million; connection-minutes $0.08 per million.
// AppSync Events, as the project's design notes give it: about $1.00 per
// million API operations (each publication, and each delivery).
const (
	AppSyncRealTimeUpdate   = 2.00 / 1e6 // dollars per message delivered
	AppSyncConnectionMinute = 0.08 / 1e6 // dollars per connection-minute
	AppSyncEventsOperation  = 1.00 / 1e6 // dollars per Events API operation
)

// Read on 2026-12-05 from stored copies of pages on Amazon CloudWatch
// pricing (the custom-metrics row: the first 10,000 metrics, standard
// resolution): a metric is billed by the hour it receives data, prorated
// to the month. AppSync's enhanced metrics are billed as custom metrics.
const CloudWatchMetricMonth = 0.30 // dollars per metric-month
