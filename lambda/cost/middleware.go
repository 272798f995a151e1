package cost

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The SDK middleware that records each call: what it asked (operation,
// index, keys), what it got (items, the capacity DynamoDB reports), and
// when.

// Middleware adds the counting step to a DynamoDB client's stack
// (o.APIOptions = append(o.APIOptions, cost.Middleware)).
func Middleware(stack *middleware.Stack) error {
	if err := stack.Initialize.Add(middleware.InitializeMiddlewareFunc("cost.Meter",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			m := fromContext(ctx)
			if m == nil {
				return next.HandleInitialize(ctx, in)
			}
			call := describeInput(in.Parameters)
			call.Branch, _ = ctx.Value(branchKey{}).(*Branch)
			call.Tag, _ = ctx.Value(tagKey{}).(int)
			keep := ctx.Value(keepKey{}) != nil
			if keep {
				call.Input = in.Parameters
			}
			call.Start = time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, bytesKey{}, &call), in)
			call.End = time.Now()
			if err == nil {
				describeOutput(&call, out.Result)
				if keep {
					call.Output = out.Result
				}
			}
			m.record(call)
			return out, md, err
		}), middleware.After); err != nil {
		return err
	}
	// Each attempt's bodies, once sent and answered.
	return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("cost.Bytes",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (middleware.DeserializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleDeserialize(ctx, in)
			if call, ok := ctx.Value(bytesKey{}).(*Call); ok {
				if req, ok := in.Request.(*smithyhttp.Request); ok && req.ContentLength > 0 {
					call.BytesOut += req.ContentLength
				}
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && resp.ContentLength > 0 {
					call.BytesIn += resp.ContentLength
				}
			}
			return out, md, err
		}), middleware.Before)
}

type bytesKey struct{}

var total = types.ReturnConsumedCapacityIndexes

// describeInput names the call and asks it to report consumed capacity.
func describeInput(params any) Call {
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "GetItem", Keys: 1}
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "Query", Index: aws.ToString(in.IndexName)}
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "Scan", Index: aws.ToString(in.IndexName)}
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = total
		n := 0
		for _, ka := range in.RequestItems {
			n += len(ka.Keys)
		}
		return Call{Operation: "BatchGetItem", Keys: n}
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = total
		n := 0
		for _, w := range in.RequestItems {
			n += len(w)
		}
		return Call{Operation: "BatchWriteItem", Keys: n}
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "PutItem", Keys: 1}
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "UpdateItem", Keys: 1}
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "DeleteItem", Keys: 1}
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "TransactWriteItems", Keys: len(in.TransactItems)}
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity = total
		return Call{Operation: "TransactGetItems", Keys: len(in.TransactItems)}
	case *dynamodb.CreateTableInput:
		return Call{Operation: "CreateTable"}
	case *dynamodb.DeleteTableInput:
		return Call{Operation: "DeleteTable"}
	default:
		return Call{Operation: "Other"}
	}
}

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		if out.Item != nil {
			c.Items = 1
		}
		c.Read += units(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			c.Items += len(items)
		}
		c.Read += sumUnits(out.ConsumedCapacity)
	case *dynamodb.TransactGetItemsOutput:
		c.Items = len(out.Responses)
		c.Read += sumUnits(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		c.Write += units(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		c.Write += units(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		c.Write += units(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
	}
}

func units(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

func sumUnits(ccs []types.ConsumedCapacity) float64 {
	var t float64
	for i := range ccs {
		t += units(&ccs[i])
	}
	return t
}
