package streams_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/local/streams"
)

func TestMatchesReadsPatternsAsLambdaDoes(t *testing.T) {
	patterns := []map[string]any{
		{"dynamodb": map[string]any{"Keys": map[string]any{
			"pk": map[string]any{"S": []any{map[string]any{"prefix": "POST#"}}},
			"sk": map[string]any{"S": []any{"#METADATA"}},
		}}},
		{"eventName": []any{"REMOVE"}},
	}
	match := streams.Matches(patterns)
	rec := func(event, pk, sk string) events.DynamoDBEventRecord {
		return events.DynamoDBEventRecord{EventName: event, Change: events.DynamoDBStreamRecord{Keys: map[string]events.DynamoDBAttributeValue{
			"pk": events.NewStringAttribute(pk), "sk": events.NewStringAttribute(sk)}}}
	}
	for _, c := range []struct {
		r    events.DynamoDBEventRecord
		want bool
	}{
		{rec("INSERT", "POST#1", "#METADATA"), true},
		{rec("MODIFY", "POST#1", "#COUNT"), false},
		{rec("INSERT", "POST#1", "COMMENT#2"), false},
		{rec("INSERT", "USER#1", "#METADATA"), false},
		{rec("INSERT", "XPOST#1", "#METADATA"), false},
		{rec("REMOVE", "USER#1", "FOLLOWS#2"), true}, // the second pattern
		{events.DynamoDBEventRecord{EventName: "INSERT"}, false},
	} {
		if got := match(c.r); got != c.want {
			t.Errorf("%s %v: %v, want %v", c.r.EventName, c.r.Change.Keys, got, c.want)
		}
	}
}
