package store_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
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
	got, err := s.Users(ctx, ids, true)
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
	rec := &tokenRecorder{API: client}
	s := store.New(rec, seeded.Table(), cursor.New(storetest.TokenKey))
	ctx, m := metered(t)
	if _, err := s.CreateComment(ctx, sample.Carol, sample.HelloPost, "after three conflicts"); err != nil {
		t.Fatal(err)
	}
	if n := m.Count("TransactWriteItems"); n != 4 {
		t.Errorf("%d TransactWriteItems calls, want 4 (3 conflicts, then success)", n)
	}
	// A conflict means nothing was written: each attempt is a new write.
	if distinct := len(slices.Compact(slices.Sorted(slices.Values(rec.tokens)))); distinct != 4 {
		t.Errorf("tokens %v: want a fresh one after each TransactionConflict", rec.tokens)
	}
	items := count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
	if got := numberAttr(t, raw(t, c, s.Table(), store.PostPK(sample.HelloPost), store.SKCount), "commentCount"); items != 3 || got != "3" {
		t.Errorf("comments = %d, commentCount = %s; want 3 and 3", items, got)
	}
}

// tokenRecorder records the ClientRequestToken of every TransactWriteItems.
type tokenRecorder struct {
	store.API
	tokens []string
}

func (r *tokenRecorder) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (*dynamodb.TransactWriteItemsOutput, error) {
	r.tokens = append(r.tokens, aws.ToString(in.ClientRequestToken))
	return r.API.TransactWriteItems(ctx, in, opts...)
}

// TestACommittedWriteIsNeverReportedAsFailed lets each transactional
// mutation commit and then answers it with an error that leaves the outcome
// unknown: the write must be confirmed with the same ClientRequestToken,
// reported as done, and applied once.
func TestACommittedWriteIsNeverReportedAsFailed(t *testing.T) {
	unknown := map[string]error{
		"TransactionInProgressException": &types.TransactionInProgressException{Message: aws.String("in progress")},
		"lost reply":                     errors.New("read tcp: connection reset by peer"),
	}
	type check func(t *testing.T, s *store.Store, c *dynamodb.Client)
	writes := map[string]func(ctx context.Context, s *store.Store) (check, error){
		"createUser": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.CreateUser(ctx, store.User{ID: "u_dave", Handle: "dave", Name: "Dave"})
			return func(t *testing.T, s *store.Store, c *dynamodb.Client) {
				if n := storetest.Count(t, c, s.Table(), "", "pk", store.HandlePK("dave"), "", ""); n != 1 {
					t.Errorf("%d handle guards", n)
				}
			}, err
		},
		"createPost": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.CreatePost(ctx, sample.Bob, store.NewPost{Title: "t", Body: "b"})
			return wantUserCounts(sample.Bob, 1, 1, 0), err
		},
		"deletePost": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.DeletePost(ctx, sample.Alice, sample.HelloPost)
			return wantUserCounts(sample.Alice, 0, 0, 1), err
		},
		"createComment": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.CreateComment(ctx, sample.Bob, sample.HelloPost, "again")
			return wantComments(3), err
		},
		"deleteComment": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.DeleteComment(ctx, sample.Bob, sample.HelloPost, sample.BobComment)
			return wantComments(1), err
		},
		"follow": func(ctx context.Context, s *store.Store) (check, error) {
			_, err := s.Follow(ctx, sample.Carol, sample.Alice)
			return wantUserCounts(sample.Alice, 1, 1, 1), err
		},
		"unfollow": func(ctx context.Context, s *store.Store) (check, error) {
			f, err := s.Unfollow(ctx, sample.Alice, sample.Bob)
			if err == nil && f == nil {
				err = errors.New("unfollow reported that there was nothing to remove")
			}
			return wantUserCounts(sample.Alice, 1, 0, 0), err
		},
	}
	for name, write := range writes {
		for failure, ferr := range unknown {
			t.Run(name+"/"+failure, func(t *testing.T) {
				seeded, client := storetest.NewStore(t, sample.Data())
				api := &storetest.CommitThenFail{API: client, Err: ferr}
				s := store.New(api, seeded.Table(), cursor.New(storetest.TokenKey))
				check, err := write(t.Context(), s)
				if err != nil {
					t.Fatalf("a write that committed was reported as %v", err)
				}
				if len(api.Tokens) < 2 || api.Tokens[0] != api.Tokens[1] {
					t.Errorf("tokens %v: the confirming attempt must reuse the first token", api.Tokens)
				}
				check(t, seeded, client)
			})
		}
	}
}

func wantUserCounts(id string, posts, followers, following int) func(*testing.T, *store.Store, *dynamodb.Client) {
	return func(t *testing.T, s *store.Store, c *dynamodb.Client) {
		u, err := s.User(t.Context(), id)
		if err != nil || u.PostCount != posts || u.FollowerCount != followers || u.FollowingCount != following {
			t.Errorf("%s: %+v (%v); want posts %d, followers %d, following %d", id, u, err, posts, followers, following)
		}
		if n := storetest.Count(t, c, s.Table(), store.GSI1, "gsi1pk", store.AuthorPK(id), "gsi1sk", store.PostPrefix); n != posts {
			t.Errorf("%s: %d posts", id, n)
		}
	}
}

func wantComments(n int) func(*testing.T, *store.Store, *dynamodb.Client) {
	return func(t *testing.T, s *store.Store, c *dynamodb.Client) {
		p, err := s.Post(t.Context(), sample.HelloPost)
		items := storetest.Count(t, c, s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
		if err != nil || p.CommentCount != n || items != n {
			t.Errorf("commentCount %d, %d comments (%v); want %d", p.CommentCount, items, err, n)
		}
	}
}
