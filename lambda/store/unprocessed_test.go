package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/sample"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/lambda/store/storetest"
)

func TestBatchGetRetriesUnprocessedKeys(t *testing.T) {
	users := manyUsers(120)
	seeded, _ := storetest.NewStore(t, store.Dataset{Users: users})
	client := storetest.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, storetest.HalfUnprocessed) })
	s := store.New(client, seeded.Table(), cursor.New(storetest.TokenKey))

	ids := make([]string, len(users))
	for i, u := range users {
		ids[i] = u.ID
	}
	ctx, m := metered(t)
	got, err := s.Users(ctx, ids)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if got[id].ID != id {
			t.Fatalf("user %s missing from the answer (got %d of %d)", id, len(got), len(ids))
		}
	}
	// Chunks of 100 and 20; each retry gets half of what is left.
	if n := m.Count("BatchGetItem"); n < 4 {
		t.Errorf("%d BatchGetItem calls: the unprocessed keys were not retried", n)
	}
	t.Logf("%d BatchGetItem calls for 120 keys with half withheld each time", m.Count("BatchGetItem"))
}

// conflictFirst makes the first n TransactWriteItems calls fail as DynamoDB
// fails a transaction that collides with another one on the same item.
func conflictFirst(n int) func(*middleware.Stack) error {
	var mu sync.Mutex
	return func(stack *middleware.Stack) error {
		return stack.Initialize.Add(middleware.InitializeMiddlewareFunc("test.conflictFirst",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				tx, ok := in.Parameters.(*dynamodb.TransactWriteItemsInput)
				mu.Lock()
				inject := ok && n > 0
				if inject {
					n--
				}
				mu.Unlock()
				if !inject {
					return next.HandleInitialize(ctx, in)
				}
				reasons := make([]types.CancellationReason, len(tx.TransactItems))
				for i := range reasons {
					reasons[i].Code = aws.String("None")
				}
				reasons[len(reasons)-1].Code = aws.String("TransactionConflict")
				return middleware.InitializeOutput{}, middleware.Metadata{}, &types.TransactionCanceledException{
					Message: aws.String("Transaction cancelled"), CancellationReasons: reasons}
			}), middleware.After)
	}
}

func TestTransactionConflictsAreRetried(t *testing.T) {
	seeded, c := storetest.NewStore(t, sample.Data())
	client := storetest.Client(t, func(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, conflictFirst(3)) })
	s := store.New(client, seeded.Table(), cursor.New(storetest.TokenKey))
	ctx, m := metered(t)
	if _, err := s.CreateComment(ctx, sample.Carol, sample.HelloPost, "after three conflicts"); err != nil {
		t.Fatal(err)
	}
	if n := m.Count("TransactWriteItems"); n != 4 {
		t.Errorf("%d TransactWriteItems calls, want 4 (3 conflicts, then success)", n)
	}
	items := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
	if got := numberAttr(t, raw(t, c, s.Table(), store.PostPK(sample.HelloPost), store.SKMetadata), "commentCount"); items != 3 || got != "3" {
		t.Errorf("comments = %d, commentCount = %s; want 3 and 3", items, got)
	}
}
