package storetest

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"
)

// HalfUnprocessed is client middleware that makes DynamoDB Local's BatchGetItem answers look like a
// busy table's, for tests of retries: half of the items returned are withheld and listed in
// UnprocessedKeys instead, on every call.
func HalfUnprocessed(stack *middleware.Stack) error {
	return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test.halfUnprocessed",
		func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
			out, md, err := next.HandleInitialize(ctx, in)
			o, ok := out.Result.(*dynamodb.BatchGetItemOutput)
			if err != nil || !ok {
				return out, md, err
			}
			for table, items := range o.Responses {
				keep := len(items) - len(items)/2
				if o.UnprocessedKeys == nil {
					o.UnprocessedKeys = map[string]types.KeysAndAttributes{}
				}
				ka := o.UnprocessedKeys[table]
				for _, item := range items[keep:] {
					ka.Keys = append(ka.Keys, map[string]types.AttributeValue{"pk": item["pk"], "sk": item["sk"]})
				}
				o.UnprocessedKeys[table] = ka
				o.Responses[table] = items[:keep]
			}
			return out, md, nil
		}), middleware.After)
}
