package cost_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// A request is recorded in its own meter and every enclosing one, with the
// capacity DynamoDB reports; requests without a meter are not recorded.
func TestNestedMeters(t *testing.T) {
	s, client := storetest.NewStore(t, sample.Data())
	table := s.Table()
	outer, request := cost.WithMeter(context.Background())
	inner, invocation := cost.WithMeter(outer)
	get := func(ctx context.Context) {
		t.Helper()
		if _, err := client.Query(ctx, &dynamodb.QueryInput{TableName: &table, KeyConditionExpression: strPtr("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: "USER#u_alice"}}}); err != nil {
			t.Fatal(err)
		}
	}
	get(inner)
	get(outer)
	get(context.Background())
	if invocation.Count("Query") != 1 || request.Count("Query") != 2 {
		t.Errorf("inner saw %d, outer %d; want 1 and 2", invocation.Count("Query"), request.Count("Query"))
	}
	if costdetail.RoundTrips(invocation.Calls()) != 1 || costdetail.RoundTrips(request.Calls()) != 2 {
		t.Errorf("round trips: inner %d, outer %d; want 1 and 2 (one request after the other)", costdetail.RoundTrips(invocation.Calls()), costdetail.RoundTrips(request.Calls()))
	}
	if s := request.Summary(); s.Read != 1 || s.Requests["Query"] != 2 {
		t.Errorf("summary = %+v, want 2 Queries of 0.5 RCU", s)
	}
}

func strPtr(s string) *string { return &s }
