package hotkeys_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// counterGets counts the GetItems of one counter item a store sends.
type counterGets struct {
	store.API
	key store.Key
	n   atomic.Int64
}

func (c *counterGets) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if pk, sk := in.Key["pk"], in.Key["sk"]; pk != nil && sk != nil {
		if pk.(*types.AttributeValueMemberS).Value == c.key.PK && sk.(*types.AttributeValueMemberS).Value == c.key.SK {
			c.n.Add(1)
		}
	}
	return c.API.GetItem(ctx, in, opts...)
}

// The likes of a hot post that answer with its counts alone, 50 at once in
// one store, read its counter item once: those that miss it wait for that
// read, instead of each reading a unit on the hot partition; a like a
// second later reads it again.
func TestConcurrentLikesOfAHotPostShareOneCounterRead(t *testing.T) {
	d := sample.Data()
	users := storetest.AddLikers(&d, 51)
	seeded, c := storetest.NewStore(t, d, hotkeys.Spread)
	if err := hotkeys.Of(seeded).MakeHot(t.Context(), sample.HelloPost); err != nil {
		t.Fatal(err)
	}
	gets := &counterGets{API: c, key: store.Key{PK: store.PostPK(sample.HelloPost), SK: store.SKCount}}
	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	s := storetest.New(gets, seeded.Table(), hotkeys.Spread, store.WithClock(clock))
	if _, err := s.Post(t.Context(), sample.HelloPost); err != nil { // the store learns the post hot
		t.Fatal(err)
	}
	results := storetest.AtOnce(50, func(i int) error {
		p, err := s.LikePost(t.Context(), users[i], sample.HelloPost, []string{"likeCount"})
		if err == nil && p.LikeCount < 1 {
			return fmt.Errorf("likeCount %d", p.LikeCount)
		}
		return err
	})
	if storetest.Failures(t, results) > 0 || gets.n.Load() != 1 {
		t.Errorf("50 likes at once read the hot post's counter %d times, want once", gets.n.Load())
	}
	mu.Lock()
	now = now.Add(time.Second)
	mu.Unlock()
	if _, err := s.LikePost(t.Context(), users[50], sample.HelloPost, []string{"likeCount"}); err != nil || gets.n.Load() != 2 {
		t.Errorf("a like a second later: %v, the counter read %d times in all, want twice", err, gets.n.Load())
	}
}
