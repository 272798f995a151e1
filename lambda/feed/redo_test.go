package feed_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/storetest"
	"github.com/example/appsync-dynamo/local/streams"
)

// cut is a store.API whose write number at (UpdateItem, BatchWriteItem,
// TransactWriteItems, counted from 1) fails: before it reaches DynamoDB,
// or, with landed, after (made, its answer lost). Every other write goes
// through, so that at counts every cut point of a run.
type cut struct {
	store.API
	at     int
	landed bool

	mu     sync.Mutex
	writes int
	hit    bool
}

var errKilled = errors.New("the projector was killed")

func (c *cut) write(do func() error) error {
	c.mu.Lock()
	c.writes++
	now := c.writes == c.at
	c.hit = c.hit || now
	c.mu.Unlock()
	if !now {
		return do()
	}
	if c.landed {
		_ = do()
	}
	return errKilled
}

func (c *cut) UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.UpdateItemOutput, err error) {
	err = c.write(func() error { out, err = c.API.UpdateItem(ctx, in, opts...); return err })
	return out, err
}

func (c *cut) BatchWriteItem(ctx context.Context, in *dynamodb.BatchWriteItemInput, opts ...func(*dynamodb.Options)) (out *dynamodb.BatchWriteItemOutput, err error) {
	err = c.write(func() error { out, err = c.API.BatchWriteItem(ctx, in, opts...); return err })
	return out, err
}

func (c *cut) TransactWriteItems(ctx context.Context, in *dynamodb.TransactWriteItemsInput, opts ...func(*dynamodb.Options)) (out *dynamodb.TransactWriteItemsOutput, err error) {
	err = c.write(func() error { out, err = c.API.TransactWriteItems(ctx, in, opts...); return err })
	return out, err
}

// The users of feedHistory: two authors, ann (two followers at most:
// fanned out) and ben (three in the end: at the pull threshold, read at
// read time), and four readers.
var (
	ann, ben     = "u_ann", "u_ben"
	readers      = []string{"u_r0", "u_r1", "u_r2", "u_r3"}
	pullAt       = 3
	historyUsers = func() []store.User {
		var users []store.User
		for _, id := range append([]string{ann, ben}, readers...) {
			name := strings.TrimPrefix(id, "u_")
			users = append(users, store.User{ID: id, Handle: name, Name: name, CreatedAt: "2024-05-01T00:00:00.000Z"})
		}
		return users
	}()
)

// feedHistory writes, through s, what the feeds are made of: follows of
// ann and of ben, posts published, a draft published, a post deleted, an
// unfollow and a follow again, and posts after each; between its two
// halves (ben fanned out, then pulled) it calls projected, which projects
// the first. It returns the posts' titles by ID ("deleted: <title>" for
// the one deleted).
func feedHistory(t *testing.T, s *store.Store, projected func()) map[string]string {
	ctx := t.Context()
	titles := map[string]string{}
	must := func(_ any, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	post := func(author, title string, draft bool) store.Post {
		t.Helper()
		p, err := s.CreatePost(ctx, author, store.NewPost{Title: title, Body: "b", Draft: draft})
		must(p, err)
		titles[p.ID] = title
		return p
	}
	for _, r := range readers[:2] {
		must(s.Follow(ctx, r, ann))
	}
	first := post(ann, "ann 1", false)
	draft := post(ann, "ann draft", true)
	must(s.PublishPost(ctx, ann, draft.ID))
	must(s.DeletePost(ctx, ann, first.ID))
	titles[first.ID] = "deleted: " + first.Title
	must(s.Unfollow(ctx, readers[1], ann))
	post(ann, "ann 2", false)
	must(s.Follow(ctx, readers[1], ann))
	for _, r := range readers[:2] {
		must(s.Follow(ctx, r, ben))
	}
	post(ben, "ben 1", false)
	projected()
	for _, r := range readers[2:] { // ben passes the threshold
		must(s.Follow(ctx, r, ben))
	}
	post(ben, "ben 2", false)
	must(s.Unfollow(ctx, readers[2], ben))
	post(ann, "ann 3", false)
	return titles
}

// feeds are the readers' feeds, by reader: the titles of the posts their
// entries are of, and their pull markers ("pull <author>"), sorted; and
// the titles Feed reads, in its order.
type feeds map[string]struct{ held, read []string }

func (f feeds) String() string {
	var lines []string
	for _, r := range readers {
		lines = append(lines, fmt.Sprintf("%s holds %q, reads %q", r, f[r].held, f[r].read))
	}
	return strings.Join(lines, "\n")
}

// feedState is the readers' feeds as the table holds them and Feed reads
// them.
func feedState(t *testing.T, s *store.Store, client *dynamodb.Client, titles map[string]string) feeds {
	t.Helper()
	out := feeds{}
	for _, r := range readers {
		items, err := client.Query(t.Context(), &dynamodb.QueryInput{TableName: aws.String(s.Table()), ConsistentRead: aws.Bool(true),
			KeyConditionExpression:    aws.String("pk = :pk"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: feed.PK(r)}}})
		if err != nil {
			t.Fatal(err)
		}
		var held []string
		for _, item := range items.Items {
			sk := item["sk"].(*types.AttributeValueMemberS).Value
			if author, ok := strings.CutPrefix(sk, "#PULL#"); ok {
				held = append(held, "pull "+author)
			} else if id, ok := item["postId"].(*types.AttributeValueMemberS); ok {
				held = append(held, cmp.Or(titles[id.Value], "unknown post "+id.Value))
			}
		}
		slices.Sort(held)
		page, err := feed.NewTable(s).Feed(t.Context(), r, store.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var read []string
		for _, p := range page.Items {
			read = append(read, p.Title)
		}
		out[r] = struct{ held, read []string }{held, read}
	}
	return out
}

// recountFeeds is what feedHistory's follows and posts say each reader's
// feed holds: an entry of each published post of ann's if the reader
// follows ann, a pull marker if it follows ben; and Feed reads both
// authors' published posts it follows (here sorted by title).
func recountFeeds(t *testing.T) feeds {
	s, _ := storetest.NewStore(t, store.Dataset{Users: historyUsers})
	feedHistory(t, s, func() {})
	published := func(author string) []string {
		page, err := s.PostsByAuthor(t.Context(), author, false, store.PageRequest{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var titles []string
		for _, p := range page.Items {
			titles = append(titles, p.Title)
		}
		return titles
	}
	out := feeds{}
	for _, r := range readers {
		var held, read []string
		for _, author := range []string{ann, ben} {
			follows, err := s.Follows(t.Context(), r, author)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case !follows:
			case author == ann:
				held, read = append(held, published(ann)...), append(read, published(ann)...)
			default:
				held, read = append(held, "pull "+ben), append(read, published(ben)...)
			}
		}
		slices.Sort(held)
		slices.Sort(read)
		out[r] = struct{ held, read []string }{held, read}
	}
	return out
}

// agrees reports whether the feeds agree with the recount: the same
// entries of ann's posts and pull markers (a pulled author's entries from
// before it was pulled are left to Feed's read checks and TTL), and the
// same posts read.
func (f feeds) agrees(recount feeds) bool {
	for _, r := range readers {
		held := slices.DeleteFunc(slices.Clone(f[r].held), func(h string) bool { return strings.HasPrefix(h, "ben ") })
		read := slices.Sorted(slices.Values(f[r].read))
		if !slices.Equal(held, recount[r].held) || !slices.Equal(read, recount[r].read) {
			return false
		}
	}
	return true
}

// projectorRecords reads the stream's records the projector's filter
// keeps, after those read before.
func projectorRecords(t *testing.T, s *store.Store, client *dynamodb.Client, read *streams.Checkpoints) []events.DynamoDBEventRecord {
	t.Helper()
	arn, err := ddblocal.StreamARN(t.Context(), client, s.Table())
	if err != nil {
		t.Fatal(err)
	}
	var got []events.DynamoDBEventRecord
	fn := lambda.NewHandler(func(ev events.DynamoDBEvent) error { got = append(got, ev.Records...); return nil })
	p := streams.New(ddblocal.StreamsClient(storetest.Endpoint(t)), arn, fn, streams.Config{BatchSize: 1000, Filter: streams.Matches(filters)}, read)
	if _, err := p.Poll(t.Context()); err != nil {
		t.Fatal(err)
	}
	return got
}
