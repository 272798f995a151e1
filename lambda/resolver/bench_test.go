package resolver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/traffic"
)

// authorBatch returns a 100-event Post.author batch shaped like AppSync's
// (every event repeats the headers, identity and info of events/Post.author.json),
// over 30 distinct authors.
func authorBatch(tb testing.TB) []byte {
	tb.Helper()
	raw, err := os.ReadFile("../../events/Post.author.json")
	if err != nil {
		tb.Fatal(err)
	}
	var template []map[string]any
	if err := json.Unmarshal(raw, &template); err != nil {
		tb.Fatal(err)
	}
	batch := make([]map[string]any, 100)
	for i := range batch {
		e := map[string]any{}
		for k, v := range template[0] {
			e[k] = v
		}
		e["source"] = store.Post{ID: fmt.Sprintf("01HWP%021d", i), AuthorID: fmt.Sprintf("author%02d", i%30), Title: "A post",
			Body: "Some text of a post.", CreatedAt: "2024-05-01T00:00:00.000Z", UpdatedAt: "2024-05-01T00:00:00.000Z", CommentCount: 3}
		batch[i] = e
	}
	payload, err := json.Marshal(batch)
	if err != nil {
		tb.Fatal(err)
	}
	return payload
}

// memoryStore answers Users from memory, so a benchmark measures the
// handler's own work (decode, route, encode) without the DynamoDB round trip.
type memoryStore struct {
	resolver.Store
	memoryUsers
}

// Users resolves the ambiguity between the embedded interface and map.
func (m memoryStore) Users(ctx context.Context, ids []string, _ bool) (map[string]store.User, error) {
	return m.memoryUsers.Users(ctx, ids)
}

// memoryUsers are users by ID, read as store.Users reads them.
type memoryUsers map[string]store.User

func (m memoryUsers) Users(_ context.Context, ids []string) (map[string]store.User, error) {
	out := make(map[string]store.User, len(ids))
	for _, id := range ids {
		if u, ok := m[id]; ok {
			out[id] = u
		}
	}
	return out, nil
}

// BenchmarkPostAuthorBatch100 runs a 100-event Post.author batch through
// lambda.NewHandler(...).Invoke: "handler" without DynamoDB (users from
// memory), "dynamodb-local" with the BatchGetItem round trip to DynamoDB Local.
func BenchmarkPostAuthorBatch100(b *testing.B) {
	payload := authorBatch(b)
	decode := resolver.New(memoryStore{}, quietLog()).Decode
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := decode(payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	mem := memoryStore{memoryUsers: memoryUsers{}}
	for _, u := range traffic.Users() {
		mem.memoryUsers[u.ID] = u
	}
	b.Run("handler", func(b *testing.B) {
		h := lambda.NewHandler(resolver.New(mem, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence)))
		b.SetBytes(int64(len(payload)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := h.Invoke(context.Background(), payload); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("dynamodb-local", func(b *testing.B) {
		d := sample.Data()
		d.Users = append(d.Users, traffic.Users()...)
		benchDynamoDBLocal(b, d, payload)
	})
}

// benchDynamoDBLocal runs payload through the handler on a store of d on
// DynamoDB Local.
func benchDynamoDBLocal(b *testing.B, d store.Dataset, payload []byte) {
	s, _ := storetest.NewStore(b, d)
	h := lambda.NewHandler(resolver.New(s, quietLog(), resolver.WithCostLog(io.Discard), resolver.WithSelectionReading(appsync.EveryOccurrence)))
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := h.Invoke(context.Background(), payload); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCommentAuthorBatch100 runs the traffic's 100-event Comment.author
// batch (20 distinct authors) through the handler against DynamoDB Local.
func BenchmarkCommentAuthorBatch100(b *testing.B) {
	var payload []byte
	for _, c := range traffic.Cases() {
		if c.Name == "Comment.author/100" {
			payload = c.Payload
		}
	}
	d := sample.Data()
	d.Users = append(d.Users, traffic.Users()...)
	benchDynamoDBLocal(b, d, payload)
}
