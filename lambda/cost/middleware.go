package cost

import (
	"context"
	"reflect"
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

// reads are the operations whose capacity is read capacity.
var reads = map[string]bool{"GetItem": true, "Query": true, "Scan": true, "BatchGetItem": true, "TransactGetItems": true}

// describeInput names the call, asks it to report the capacity it consumed
// by index (ReturnConsumedCapacity: INDEXES), and counts the keys it names.
func describeInput(ctx context.Context, params any) Call {
	c := Call{Operation: awsmiddleware.GetOperationName(ctx)}
	in := reflect.ValueOf(params).Elem()
	if f := in.FieldByName("ReturnConsumedCapacity"); f.IsValid() {
		f.Set(reflect.ValueOf(types.ReturnConsumedCapacityIndexes))
	}
	if f := in.FieldByName("IndexName"); f.IsValid() {
		c.Index = aws.ToString(f.Interface().(*string))
	}
	switch p := params.(type) {
	case *dynamodb.BatchGetItemInput:
		for _, ka := range p.RequestItems {
			c.Keys += len(ka.Keys)
		}
	case *dynamodb.BatchWriteItemInput:
		for _, w := range p.RequestItems {
			c.Keys += len(w)
		}
	case *dynamodb.TransactWriteItemsInput:
		c.Keys = len(p.TransactItems)
	case *dynamodb.TransactGetItemsInput:
		c.Keys = len(p.TransactItems)
	case *dynamodb.GetItemInput, *dynamodb.PutItemInput, *dynamodb.UpdateItemInput, *dynamodb.DeleteItemInput:
		c.Keys = 1
	}
	return c
}

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	out := reflect.Indirect(reflect.ValueOf(result))
	if out.Kind() != reflect.Struct {
		return
	}
	switch items, item, responses := out.FieldByName("Items"), out.FieldByName("Item"), out.FieldByName("Responses"); {
	case items.IsValid():
		c.Items = items.Len()
	case item.IsValid() && !item.IsNil():
		c.Items = 1
	case responses.Kind() == reflect.Map: // BatchGetItem's, by table
		for it := responses.MapRange(); it.Next(); {
			c.Items += it.Value().Len()
		}
	case responses.IsValid():
		c.Items = responses.Len()
	}
	var units float64
	cc := out.FieldByName("ConsumedCapacity")
	if !cc.IsValid() {
		return
	}
	switch cc := cc.Interface().(type) {
	case *types.ConsumedCapacity:
		if cc != nil {
			units = aws.ToFloat64(cc.CapacityUnits)
		}
	case []types.ConsumedCapacity:
		for i := range cc {
			units += aws.ToFloat64(cc[i].CapacityUnits)
		}
	}
	if reads[c.Operation] {
		c.Read = units
	} else {
		c.Write = units
	}
}
