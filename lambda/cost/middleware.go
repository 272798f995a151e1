package cost

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
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
			call := describeInput(ctx, in.Parameters)
			call.Branch, _ = ctx.Value(branchKey{}).(*Branch)
			call.Tag, _ = ctx.Value(tagKey{}).(int)
			call.Start = time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, bytesKey{}, &call), in)
			call.End = time.Now()
			if err == nil {
				describeOutput(&call, out.Result)
			}
			if ctx.Value(keepKey{}) != nil {
				call.Input, call.Output = in.Parameters, out.Result
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

const indexes = types.ReturnConsumedCapacityIndexes

// describeInput names the call, asks it to report the capacity it consumed
// by index (ReturnConsumedCapacity: INDEXES), and counts the keys it names.
func describeInput(ctx context.Context, params any) Call {
	c := Call{Operation: awsmiddleware.GetOperationName(ctx)}
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.QueryInput:
		in.ReturnConsumedCapacity, c.Index = indexes, aws.ToString(in.IndexName)
	case *dynamodb.ScanInput:
		in.ReturnConsumedCapacity, c.Index = indexes, aws.ToString(in.IndexName)
	case *dynamodb.BatchGetItemInput:
		in.ReturnConsumedCapacity = indexes
		for _, ka := range in.RequestItems {
			c.Keys += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemInput:
		in.ReturnConsumedCapacity = indexes
		for _, w := range in.RequestItems {
			c.Keys += len(w)
		}
	case *dynamodb.PutItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.UpdateItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.DeleteItemInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, 1
	case *dynamodb.TransactWriteItemsInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, len(in.TransactItems)
	case *dynamodb.TransactGetItemsInput:
		in.ReturnConsumedCapacity, c.Keys = indexes, len(in.TransactItems)
	}
	return c
}

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		c.Items, c.Read = min(len(out.Item), 1), unitsOf(out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		c.Items, c.Read = len(out.Items), unitsOf(out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		c.Items, c.Read = len(out.Items), unitsOf(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			c.Items += len(items)
		}
		c.Read = sumOf(out.ConsumedCapacity)
	case *dynamodb.TransactGetItemsOutput:
		c.Items, c.Read = len(out.Responses), sumOf(out.ConsumedCapacity)
	case *dynamodb.BatchWriteItemOutput:
		c.Write = sumOf(out.ConsumedCapacity)
	case *dynamodb.PutItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		c.Write = unitsOf(out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		c.Write = sumOf(out.ConsumedCapacity)
	}
}

// unitsOf is cc's capacity units (0 for none).
func unitsOf(cc *types.ConsumedCapacity) float64 {
	if cc == nil {
		return 0
	}
	return aws.ToFloat64(cc.CapacityUnits)
}

// sumOf adds up the capacity units of ccs.
func sumOf(ccs []types.ConsumedCapacity) (t float64) {
	for i := range ccs {
		t += unitsOf(&ccs[i])
	}
	return t
}
