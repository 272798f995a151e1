package bench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/wired"
)

// FanOut is what publishing one post cost the projector, for an author with
// Followers followers: DynamoDB's write and read units, the requests, and
// the time on DynamoDB Local (local, not AWS's).
type FanOut struct {
	Followers   int
	Write, Read float64
	Requests    map[string]int
	Took        time.Duration
}

// FanOuts measures the projector's fan-out of one published post for
// authors with each number of followers, on fresh tables (loaded directly:
// follow items only).
func FanOuts(ctx context.Context, endpoint string, followers ...int) ([]FanOut, error) {
	client := ddblocal.Client(endpoint)
	var out []FanOut
	for _, n := range followers {
		s, drop, err := benchStore(ctx, client, fmt.Sprintf("bench-fanout-%d", n))
		if err != nil {
			return nil, err
		}
		d := store.Dataset{Users: []store.User{{ID: "u_author", Handle: "author", Name: "Author", CreatedAt: "2026-01-01T00:00:00.000Z", FollowerCount: n}}}
		for i := range n {
			d.Follows = append(d.Follows, store.Follow{FollowerID: fmt.Sprintf("u_f%06d", i), FollowedID: "u_author", CreatedAt: "2026-01-01T00:00:00.000Z"})
		}
		load, cancel := context.WithTimeout(ctx, 10*time.Minute) // 100,000 follows take DynamoDB Local a while
		err = s.Load(load, d)
		cancel()
		if err != nil {
			drop()
			return nil, err
		}
		post, err := s.CreatePost(ctx, "u_author", store.NewPost{Title: "Title", Body: "Body"})
		if err != nil {
			drop()
			return nil, err
		}
		img := map[string]events.DynamoDBAttributeValue{
			"pk": events.NewStringAttribute(store.PostPK(post.ID)), "sk": events.NewStringAttribute(store.SKMetadata),
			"gsi1sk": events.NewStringAttribute(store.PublishedSK(post.ID)), "id": events.NewStringAttribute(post.ID),
			"authorId": events.NewStringAttribute(post.AuthorID), "status": events.NewStringAttribute(store.StatusPublished),
		}
		rec := events.DynamoDBEventRecord{EventName: "INSERT", Change: events.DynamoDBStreamRecord{SequenceNumber: "1",
			Keys: map[string]events.DynamoDBAttributeValue{"pk": img["pk"], "sk": img["sk"]}, NewImage: img}}
		// However long it takes: the point is what it costs (in Lambda, the
		// function's 60 s would end it).
		mctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
		mctx, m := cost.WithMeter(mctx)
		start := time.Now()
		resp, err := projector.New(slog.New(slog.NewTextHandler(io.Discard, nil)), nil, feed.NewProjection(s)).Handle(mctx, events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		took := time.Since(start)
		cancel()
		drop()
		if err != nil || len(resp.BatchItemFailures) > 0 {
			return nil, fmt.Errorf("fan-out to %d followers: %v %+v", n, err, resp)
		}
		sum := m.Summary()
		out = append(out, FanOut{Followers: n, Write: sum.Write, Read: sum.Read, Requests: sum.Requests, Took: took})
	}
	return out, nil
}

// FeedPage is what one page of 20 posts cost, read as Query.feed reads it
// and as a client without a feed would (the reader's follows, then each
// followed user's posts, merged on the phone).
type FeedPage struct {
	Way                  string
	Requests, RoundTrips int
	Read                 float64
}

// FeedPages measures a page of the feed of a reader following authors
// users with posts posts each, both ways.
func FeedPages(ctx context.Context, endpoint string, authors, posts int) ([]FeedPage, error) {
	client := ddblocal.Client(endpoint)
	s, drop, err := benchStore(ctx, client, "bench-feed")
	if err != nil {
		return nil, err
	}
	defer drop()
	const reader = "u_reader"
	d := store.Dataset{Users: []store.User{{ID: reader, Handle: "reader", Name: "Reader", CreatedAt: "2026-01-01T00:00:00.000Z", FollowingCount: authors}}}
	start := time.Now().Add(-time.Hour)
	for a := range authors {
		id := fmt.Sprintf("u_a%03d", a)
		d.Users = append(d.Users, store.User{ID: id, Handle: fmt.Sprintf("a%03d", a), Name: id, CreatedAt: "2026-01-01T00:00:00.000Z", FollowerCount: 1, PostCount: posts})
		d.Follows = append(d.Follows, store.Follow{FollowerID: reader, FollowedID: id, CreatedAt: "2026-01-01T00:00:00.000Z"})
		for p := range posts {
			at := start.Add(time.Duration(p*authors+a) * time.Second)
			pid := store.NewULID(at)
			d.Posts = append(d.Posts, store.Post{ID: pid, AuthorID: id, Title: "Title", Body: "A post of a hundred characters or so, as most are.", CreatedAt: at.Format(time.RFC3339), UpdatedAt: at.Format(time.RFC3339), Status: store.StatusPublished})
			d.Items = append(d.Items, feed.Entry{Reader: reader, Place: store.PublishedSK(pid), PostID: pid, AuthorID: id, Expires: at.Add(feed.TTL).Unix()}.Item())
		}
	}
	if err := s.Load(ctx, d); err != nil {
		return nil, err
	}
	page := store.PageRequest{Limit: 20, Attributes: []string{"id", "title", "body", "createdAt"}}
	measure := func(way string, fn func(ctx context.Context) error) (FeedPage, error) {
		mctx, m := cost.WithMeter(ctx)
		err := fn(mctx)
		sum := m.Summary()
		n := 0
		for _, k := range sum.Requests {
			n += k
		}
		return FeedPage{Way: way, Requests: n, RoundTrips: costdetail.RoundTrips(m.Calls()), Read: sum.Read}, err
	}
	plain, err := measure("Query.feed", func(ctx context.Context) error {
		p, err := feed.NewTable(s).Feed(ctx, reader, page)
		if err == nil && len(p.Items) != 20 {
			err = fmt.Errorf("a page of %d posts", len(p.Items))
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	merged, err := measure(fmt.Sprintf("following, then %d x User.posts at once", authors), func(ctx context.Context) error {
		follows, err := s.Following(ctx, reader, store.PageRequest{Limit: 100})
		if err != nil {
			return err
		}
		branch := cost.Together(ctx)
		errs := make(chan error, len(follows.Items))
		for _, f := range follows.Items {
			ctx := branch()
			go func() { _, err := s.PostsByAuthor(ctx, f.FollowedID, false, page); errs <- err }()
		}
		for range follows.Items {
			if err := <-errs; err != nil {
				return err
			}
		}
		return nil
	})
	return []FeedPage{plain, merged}, err
}

// benchStore is a store on a new table without its stream (the figures are
// the same with it), and the table's removal.
func benchStore(ctx context.Context, client *dynamodb.Client, prefix string) (*store.Store, func(), error) {
	table := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano())
	if _, err := client.CreateTable(ctx, ddblocal.CreateTableInput(ddblocal.WithoutStream(store.Schema), table)); err != nil {
		return nil, nil, err
	}
	drop := func() {
		client.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	}
	return store.New(client, table, cursor.New([]byte("bench-token-key")), wired.Store...), drop, nil
}

// PrintFeed writes the fan-out and feed-page tables.
func PrintFeed(w io.Writer, fanOuts []FanOut, pages []FeedPage) {
	fmt.Fprintln(w, "| Followers | WCU per published post | RCU | Requests | Time on DynamoDB Local |")
	fmt.Fprintln(w, "|---:|---:|---:|---|---:|")
	for _, f := range fanOuts {
		fmt.Fprintf(w, "| %d | %g | %g | %v | %v |\n", f.Followers, f.Write, f.Read, f.Requests, f.Took.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| A page of 20 posts | Requests | Round trips | RCU |")
	fmt.Fprintln(w, "|---|---:|---:|---:|")
	for _, p := range pages {
		fmt.Fprintf(w, "| %s | %d | %d | %g |\n", p.Way, p.Requests, p.RoundTrips, p.Read)
	}
}
