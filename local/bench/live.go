package bench

import (
	"fmt"
	"io"

	"github.com/example/appsync-dynamo/local/prices"
)

// PrintLiveDollars writes what a million deliveries of live updates cost
// (lambda/live), beside the queries' table: a mutation's result delivered
// to a subscriber (a comment, a post's activity) costs AppSync's real-time
// update alone, its mutation being priced as a mutation; a pushed feed's
// delivery adds its share of the projector's pushFeed calls, priced from
// the writes table's pushFeed row (a chunk of that many readers: an
// AppSync request, an invocation, its DynamoDB units), which the largest
// chunks (live.MaxReaderBytes) only make cheaper.
func PrintLiveDollars(w io.Writer, writes []WriteCost, chunk int) {
	const million = 1e6
	fmt.Fprintln(w, "| Delivery | AppSync real-time updates | AppSync requests | Lambda requests | DynamoDB | $ per million deliveries |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	updates := million * prices.AppSyncRealTimeUpdate
	fmt.Fprintf(w, "| a mutation's result to a subscriber (onCreateComment, onPostActivity) | %.2f | 0.00 | 0.00 | 0.00 | %.2f |\n", updates, updates)
	for _, c := range writes {
		if c.Mutation != "pushFeed" {
			continue
		}
		calls := million / float64(chunk)
		appsync, lambda := calls*prices.AppSyncOperation, calls*prices.LambdaRequest
		dynamodb := calls * prices.PerMillion(c.Read, c.Write) / million
		fmt.Fprintf(w, "| a post pushed to a reader's feed (onFeed; pushFeed in chunks of %d) | %.2f | %.2f | %.2f | %.2f | %.2f |\n",
			chunk, updates, appsync, lambda, dynamodb, updates+appsync+lambda+dynamodb)
	}
}
