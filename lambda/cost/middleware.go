package cost

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// The SDK middleware that records each call: what it asked (operation,
// index, keys), what it got (items, the capacity DynamoDB reports, where it
// landed), and when.

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
			call.branch, _ = ctx.Value(branchKey{}).(*branch)
			call.Tag, _ = ctx.Value(tagKey{}).(int)
			if call.Tag != 0 {
				call.KeysAsked = keysAsked(in.Parameters)
			}
			call.Start = time.Now()
			out, md, err := next.HandleInitialize(context.WithValue(ctx, bytesKey{}, &call), in)
			call.End = time.Now()
			if err == nil {
				describeOutput(&call, out.Result)
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

// keysAsked lists the keys a request names: each key's string values in
// attribute order ("pk sk"), or a Query's key condition values.
func keysAsked(params any) []string {
	key := func(k map[string]types.AttributeValue) string {
		names := make([]string, 0, len(k))
		for n := range k {
			names = append(names, n)
		}
		sort.Strings(names)
		var parts []string
		for _, n := range names {
			if v, ok := k[n].(*types.AttributeValueMemberS); ok {
				parts = append(parts, v.Value)
			}
		}
		return strings.Join(parts, " ")
	}
	keyOf := func(item map[string]types.AttributeValue) string {
		return key(map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
	}
	var out []string
	switch in := params.(type) {
	case *dynamodb.GetItemInput:
		out = append(out, key(in.Key))
	case *dynamodb.QueryInput:
		var values []string
		for _, placeholder := range strings.Fields(aws.ToString(in.KeyConditionExpression)) {
			if v, ok := in.ExpressionAttributeValues[strings.Trim(placeholder, "()")].(*types.AttributeValueMemberS); ok {
				values = append(values, v.Value)
			}
		}
		out = append(out, strings.Join(values, " "))
	case *dynamodb.BatchGetItemInput:
		for _, ka := range in.RequestItems {
			for _, k := range ka.Keys {
				out = append(out, key(k))
			}
		}
	case *dynamodb.BatchWriteItemInput:
		for _, ws := range in.RequestItems {
			for _, w := range ws {
				if w.PutRequest != nil {
					out = append(out, keyOf(w.PutRequest.Item))
				} else if w.DeleteRequest != nil {
					out = append(out, key(w.DeleteRequest.Key))
				}
			}
		}
	case *dynamodb.UpdateItemInput:
		out = append(out, key(in.Key))
	case *dynamodb.TransactWriteItemsInput:
		for _, it := range in.TransactItems {
			switch {
			case it.Put != nil:
				out = append(out, keyOf(it.Put.Item))
			case it.Update != nil:
				out = append(out, key(it.Update.Key))
			case it.Delete != nil:
				out = append(out, key(it.Delete.Key))
			case it.ConditionCheck != nil:
				out = append(out, key(it.ConditionCheck.Key))
			}
		}
	}
	return out
}

// describeOutput adds the items returned and the capacity consumed.
func describeOutput(c *Call, result any) {
	switch out := result.(type) {
	case *dynamodb.GetItemOutput:
		if out.Item != nil {
			c.Items = 1
		}
		c.Read += units(out.ConsumedCapacity)
		whereOne(c, false, out.ConsumedCapacity)
	case *dynamodb.QueryOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
		whereOne(c, false, out.ConsumedCapacity)
	case *dynamodb.ScanOutput:
		c.Items = len(out.Items)
		c.Read += units(out.ConsumedCapacity)
	case *dynamodb.BatchGetItemOutput:
		for _, items := range out.Responses {
			c.Items += len(items)
		}
		c.Read += sumUnits(out.ConsumedCapacity)
		where(c, false, out.ConsumedCapacity...)
	case *dynamodb.TransactGetItemsOutput:
		c.Items = len(out.Responses)
		c.Read += sumUnits(out.ConsumedCapacity)
		where(c, false, out.ConsumedCapacity...)
	case *dynamodb.BatchWriteItemOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
		where(c, true, out.ConsumedCapacity...)
	case *dynamodb.PutItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.UpdateItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.DeleteItemOutput:
		c.Write += units(out.ConsumedCapacity)
		whereOne(c, true, out.ConsumedCapacity)
	case *dynamodb.TransactWriteItemsOutput:
		c.Write += sumUnits(out.ConsumedCapacity)
		where(c, true, out.ConsumedCapacity...)
	}
}

// where adds the index detail of ccs to c.Where, as units written or read.
func where(c *Call, write bool, ccs ...types.ConsumedCapacity) {
	add := func(name string, cap *types.Capacity) {
		if cap == nil {
			return
		}
		if c.Where == nil {
			c.Where = map[string]Units{}
		}
		// CapacityUnits: DynamoDB Local leaves the read and write figures of
		// a part out on reads; an operation either reads or writes.
		u := c.Where[name]
		if write {
			u.Write += aws.ToFloat64(cap.CapacityUnits)
		} else {
			u.Read += aws.ToFloat64(cap.CapacityUnits)
		}
		c.Where[name] = u
	}
	for i := range ccs {
		add("", ccs[i].Table)
		for name, cap := range ccs[i].GlobalSecondaryIndexes {
			add(name, &cap)
		}
		for name, cap := range ccs[i].LocalSecondaryIndexes {
			add(name, &cap)
		}
	}
}

func whereOne(c *Call, write bool, cc *types.ConsumedCapacity) {
	if cc != nil {
		where(c, write, *cc)
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
