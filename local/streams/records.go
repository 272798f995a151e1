package streams

import (
	"fmt"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// eventRecord is the record as Lambda's event source mapping hands it to a
// function (events.DynamoDBEventRecord, "eventVersion" 1.1), from the record
// as GetRecords returns it, its creation time to the second (stamp).
func eventRecord(r types.Record, streamARN, region string) (events.DynamoDBEventRecord, error) {
	change := r.Dynamodb
	if change == nil {
		return events.DynamoDBEventRecord{}, fmt.Errorf("record %s has no change", aws.ToString(r.EventID))
	}
	out := events.DynamoDBEventRecord{
		AWSRegion:      region,
		EventID:        aws.ToString(r.EventID),
		EventName:      string(r.EventName),
		EventSource:    "aws:dynamodb",
		EventVersion:   "1.1",
		EventSourceArn: streamARN,
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: aws.ToString(change.SequenceNumber),
			SizeBytes:      aws.ToInt64(change.SizeBytes),
			StreamViewType: string(change.StreamViewType),
		},
	}
	if t := change.ApproximateCreationDateTime; t != nil {
		out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: stamp(streamARN, out.Change.SequenceNumber, *t, time.Now())}
	}
	if id := r.UserIdentity; id != nil { // a TTL deletion: the DynamoDB service
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(id.Type), PrincipalID: aws.ToString(id.PrincipalId)}
	}
	var err error
	if out.Change.Keys, err = image(change.Keys); err != nil {
		return out, err
	}
	if out.Change.NewImage, err = image(change.NewImage); err != nil {
		return out, err
	}
	out.Change.OldImage, err = image(change.OldImage)
	return out, err
}

func image(item map[string]types.AttributeValue) (map[string]events.DynamoDBAttributeValue, error) {
	if item == nil {
		return nil, nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(item))
	for name, v := range item {
		a, err := attribute(v)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", name, err)
		}
		out[name] = a
	}
	return out, nil
}

func attribute(v types.AttributeValue) (events.DynamoDBAttributeValue, error) {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value), nil
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value), nil
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value), nil
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value), nil
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute(), nil
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value), nil
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value), nil
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value), nil
	case *types.AttributeValueMemberL:
		list := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			a, err := attribute(e)
			if err != nil {
				return events.DynamoDBAttributeValue{}, err
			}
			list[i] = a
		}
		return events.NewListAttribute(list), nil
	case *types.AttributeValueMemberM:
		m, err := image(v.Value)
		if err != nil {
			return events.DynamoDBAttributeValue{}, err
		}
		return events.NewMapAttribute(m), nil
	}
	return events.DynamoDBAttributeValue{}, fmt.Errorf("unknown attribute value %T", v)
}
