package hotpage_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/hotkeys"
	"github.com/example/appsync-dynamo/lambda/hotpage"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// reads counts the reads a store makes of the table.
type reads struct {
	store.API
	n atomic.Int64
}

func (r *reads) GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.n.Add(1)
	return r.API.GetItem(ctx, in, opts...)
}

func (r *reads) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	r.n.Add(1)
	return r.API.Query(ctx, in, opts...)
}

func (r *reads) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	r.n.Add(1)
	return r.API.BatchGetItem(ctx, in, opts...)
}

// clock is a clock a test moves.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// hotData is the sample data with three readers more.
func hotData() store.Dataset {
	d := sample.Data()
	for i := 1; i <= 3; i++ {
		d.Users = append(d.Users, store.User{ID: fmt.Sprintf("u_reader%02d", i), Handle: fmt.Sprintf("reader%02d", i), Name: "Reader", CreatedAt: "2024-05-01T00:00:00.000Z"})
	}
	return d
}

// hotPost makes a hot post of alice's with comments before and after it
// turned hot (in its partition and in its shards), each by another reader.
func hotPost(t *testing.T, s *store.Store) store.Post {
	t.Helper()
	ctx := t.Context()
	p, err := s.CreatePost(ctx, sample.Alice, store.NewPost{Title: "viral", Body: "read by many"})
	if err != nil {
		t.Fatal(err)
	}
	for i, u := range []string{sample.Bob, sample.Carol, "u_reader01", "u_reader02"} {
		if i == 2 {
			if err := hotkeys.Of(s).MakeHot(ctx, p.ID); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.CreateComment(ctx, u, p.ID, fmt.Sprint("comment ", i)); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

// readPage reads the page a reader of the post reads: the post, its first
// comments oldest first, their authors.
func readPage(ctx context.Context, s *hotpage.Store, postID string) (store.Post, store.Page[store.Comment], map[string]store.User, error) {
	p, err := s.Post(ctx, postID)
	if err != nil {
		return p, store.Page[store.Comment]{}, nil, err
	}
	page, err := s.CommentsOnPost(ctx, postID, store.PageRequest{Limit: 20})
	if err != nil {
		return p, page, nil, err
	}
	var ids []string
	for _, c := range page.Items {
		ids = append(ids, c.AuthorID)
	}
	authors, err := s.PageAuthors(ctx, postID, ids, false)
	return p, page, authors, err
}

// N readers of a hot post in one environment, at once and one after the
// other, within one TTL, read its page from the table once: one read of the
// post, one of its comments (its partition and shards, one round trip), one
// of their authors; past the TTL, once again.
func TestAHotPostsPageIsReadOncePerTTL(t *testing.T) {
	base, _ := storetest.NewStore(t, hotData(), hotkeys.Spread)
	post := hotPost(t, base)
	counted := &reads{API: storetest.Client(t)}
	c := &clock{t: time.Now()}
	raw := store.New(counted, base.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread, store.WithClock(c.now))
	s := hotpage.New(raw, raw)
	if _, err := s.Post(t.Context(), post.ID); err != nil { // a first read learns it hot
		t.Fatal(err)
	}
	first := counted.n.Load()
	if !s.KeepsPage(post.ID) {
		t.Fatal("the store did not learn the post hot")
	}
	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			p, page, authors, err := readPage(t.Context(), s, post.ID)
			if err != nil || p.Title != "viral" || len(page.Items) != 4 || len(authors) != 4 {
				t.Errorf("a reader: %q, %d comments, %d authors, %v", p.Title, len(page.Items), len(authors), err)
			}
		})
	}
	wg.Wait()
	for range 50 {
		if _, _, _, err := readPage(t.Context(), s, post.ID); err != nil {
			t.Fatal(err)
		}
	}
	partitions := 1 + hotkeys.CommentShards // the comments' Queries, one round trip
	if got, want := counted.n.Load()-first, int64(1+partitions+1); got != want {
		t.Errorf("100 readers in one TTL: %d reads of the table, want %d (the post, its comments' %d partitions, their authors)", got, want, partitions)
	}
	c.add(hotpage.TTL)
	before := counted.n.Load()
	if _, _, _, err := readPage(t.Context(), s, post.ID); err != nil {
		t.Fatal(err)
	}
	if got := counted.n.Load() - before; got != int64(1+partitions+1) {
		t.Errorf("a reader past the TTL: %d reads, want %d", got, 1+partitions+1)
	}
}

// What another environment writes is seen within the TTL, never later;
// what this environment writes, at once.
func TestAHotPostsPageIsAtMostTheTTLLate(t *testing.T) {
	base, _ := storetest.NewStore(t, hotData(), hotkeys.Spread)
	post := hotPost(t, base)
	c := &clock{t: time.Now()}
	reader := keeper(store.New(storetest.Client(t), base.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread, store.WithClock(c.now)))
	other := store.New(storetest.Client(t), base.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread)
	ctx := t.Context()
	comments := func(s *hotpage.Store) []string {
		t.Helper()
		_, page, _, err := readPage(ctx, s, post.ID)
		if err != nil {
			t.Fatal(err)
		}
		var bodies []string
		for _, c := range page.Items {
			bodies = append(bodies, c.Body)
		}
		return bodies
	}
	comments(reader) // learns it hot, keeps its page
	comments(reader)
	title := "edited elsewhere"
	if _, err := other.UpdatePost(ctx, sample.Alice, post.ID, store.PostEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.CreateComment(ctx, sample.Bob, post.ID, "from elsewhere"); err != nil {
		t.Fatal(err)
	}
	if p, _ := reader.Post(ctx, post.ID); p.Title != "viral" || slices.Contains(comments(reader), "from elsewhere") {
		t.Errorf("within the TTL, another environment's writes: %q, %q; want the page kept", p.Title, comments(reader))
	}
	c.add(hotpage.TTL)
	if p, _ := reader.Post(ctx, post.ID); p.Title != title || !slices.Contains(comments(reader), "from elsewhere") {
		t.Errorf("past the TTL: %q, %q; want the edit and the comment", p.Title, comments(reader))
	}
	if _, err := reader.CreateComment(ctx, sample.Carol, post.ID, "from here"); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(comments(reader), "from here") {
		t.Errorf("its own comment, at once: %q", comments(reader))
	}
	if _, err := reader.DeletePost(ctx, sample.Alice, post.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := reader.Post(ctx, post.ID); err == nil {
		t.Error("its own deletion, at once: the post is still read")
	}
	// A consistent read (a mutation's answer) never reads what is kept.
	base2, _ := storetest.NewStore(t, hotData(), hotkeys.Spread)
	hot := hotPost(t, base2)
	kept := keeper(store.New(storetest.Client(t), base2.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread, store.WithClock(c.now)))
	kept.Post(ctx, hot.ID)
	kept.Post(ctx, hot.ID)
	if _, err := base2.UpdatePost(ctx, sample.Alice, hot.ID, store.PostEdit{Title: &title}); err != nil {
		t.Fatal(err)
	}
	if p, err := kept.Post(store.WithConsistentReads(ctx), hot.ID); err != nil || p.Title != title {
		t.Errorf("a consistent read: %q, %v; want the table's", p.Title, err)
	}
}

// keeper is s with hot posts' pages kept, as the resolvers read it.
func keeper(s *store.Store) *hotpage.Store { return hotpage.New(s, s) }

// failing is a store.API whose Queries of one partition DynamoDB refuses
// as throttled while on.
type failing struct {
	store.API
	throttled storetest.ThrottleQueriesOf
	on        atomic.Bool
}

func (f *failing) Query(ctx context.Context, in *dynamodb.QueryInput, opts ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	if f.on.Load() {
		return f.throttled.Query(ctx, in, opts...)
	}
	return f.API.Query(ctx, in, opts...)
}

// While DynamoDB refuses a hot post's partition, every reader of its page
// in the environment (the post kept, its comments to read), those waiting
// for one shared read included, gets DynamoDB's refusal (Throttled), never
// a page kept empty or in part; and the first reader once it answers again
// reads the whole page.
func TestAHotPostsPageIsNotKeptWhileDynamoDBFails(t *testing.T) {
	base, _ := storetest.NewStore(t, hotData(), hotkeys.Spread)
	post := hotPost(t, base)
	client := storetest.Client(t)
	api := &failing{API: client, throttled: storetest.ThrottleQueriesOf{API: client, PK: store.PostPK(post.ID)}}
	c := &clock{t: time.Now()}
	raw := store.New(api, base.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread, store.WithClock(c.now))
	s := hotpage.New(raw, raw)
	if _, err := s.Post(t.Context(), post.ID); err != nil || !s.KeepsPage(post.ID) { // a first read learns it hot
		t.Fatalf("the store did not learn the post hot: %v", err)
	}
	if _, err := s.Post(t.Context(), post.ID); err != nil { // kept: the readers below read the comments
		t.Fatal(err)
	}
	api.on.Store(true)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			p, page, _, err := readPage(t.Context(), s, post.ID)
			if errs.KindOf(err) != errs.Throttled {
				t.Errorf("a reader while DynamoDB refuses: %q, %d comments, error %v, want Throttled", p.Title, len(page.Items), err)
			}
		})
	}
	wg.Wait()
	api.on.Store(false)
	want, err := store.New(client, base.Table(), cursor.New(storetest.TokenKey), hotkeys.Spread).Post(t.Context(), post.ID)
	if err != nil {
		t.Fatal(err)
	}
	p, page, authors, err := readPage(t.Context(), s, post.ID)
	if err != nil || p.Title != want.Title || p.CommentCount != want.CommentCount || len(page.Items) != 4 || len(authors) != 4 {
		t.Errorf("the first reader once DynamoDB answers: %q (%d comments counted, want %d), %d comments, %d authors, %v", p.Title, p.CommentCount, want.CommentCount, len(page.Items), len(authors), err)
	}
}
