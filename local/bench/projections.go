package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/cursor"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/costdetail"
	"github.com/example/appsync-dynamo/local/ddblocal"
	"github.com/example/appsync-dynamo/local/wired"
)

// Projection is one way GSI1 could project its items.
type Projection struct {
	Name       string
	projection types.Projection
}

// Projections are GSI1's candidates: every attribute (the table's), and
// every attribute its queries read but a body (a post's up to 80 kB, a
// comment's up to 8 kB). The keys only would do no better than the second
// for what it saves and worse for what it reads: a listing of titles would
// need the posts' whole items as well.
var Projections = []Projection{
	{"ALL", types.Projection{ProjectionType: types.ProjectionTypeAll}},
	{"INCLUDE all but body", types.Projection{ProjectionType: types.ProjectionTypeInclude, NonKeyAttributes: []string{
		"id", "handle", "name", "email", "bio", "createdAt", "postCount", "followerCount", "followingCount", // users
		"authorId", "title", "updatedAt", "commentCount", "likeCount", "status", // posts
		"postId", // comments
	}}},
}

// ProjectionCost is what one GSI1 projection costs, for posts of one size:
// GSI1's write units for each write of a post, its bytes per post, and a
// page of 20 of them listed by User.posts, titles only or with bodies (the
// requests, their read units, and how many posts one Query returns before
// DynamoDB's 1 MB).
type ProjectionCost struct {
	Projection, Posts               string
	CreatePost, UpdatePost, Publish float64 // GSI1 write units
	IndexBytes                      int     // one post's entry in GSI1, as DynamoDB sizes it (+100 bytes of overhead)
	Titles, Bodies                  Listing
}

// Listing is the cost of one page of User.posts.
type Listing struct {
	Requests, RoundTrips int
	Read                 float64
	Posts                int // posts on the page
}

// ProjectionCosts measures every candidate projection of GSI1 on posts of
// each size, on fresh tables of DynamoDB Local at endpoint.
func ProjectionCosts(ctx context.Context, endpoint string) ([]ProjectionCost, error) {
	client := ddblocal.Client(endpoint)
	var out []ProjectionCost
	for _, p := range Projections {
		for _, size := range []struct{ name, title, body string }{
			{"of 100 characters", "Title", strings.Repeat("b", smallBody)},
			{"of 4,000 characters", "Title", strings.Repeat("b", mediumBody)},
			{"the largest", strings.Repeat(four, largestTitle), strings.Repeat(four, largestBody)},
		} {
			c, err := projectionCost(ctx, client, p, size.title, size.body)
			if err != nil {
				return nil, fmt.Errorf("%s, posts %s: %w", p.Name, size.name, err)
			}
			c.Projection, c.Posts = p.Name, size.name
			out = append(out, c)
		}
	}
	return out, nil
}

func projectionCost(ctx context.Context, client *dynamodb.Client, p Projection, title, body string) (ProjectionCost, error) {
	table := fmt.Sprintf("bench-projection-%d", time.Now().UnixNano())
	in := ddblocal.CreateTableInput(ddblocal.WithoutStream(store.Schema), table)
	for i, ix := range in.GlobalSecondaryIndexes {
		if aws.ToString(ix.IndexName) == store.GSI1 {
			in.GlobalSecondaryIndexes[i].Projection = &p.projection
		}
	}
	if _, err := client.CreateTable(ctx, in); err != nil {
		return ProjectionCost{}, err
	}
	defer client.DeleteTable(context.WithoutCancel(ctx), &dynamodb.DeleteTableInput{TableName: aws.String(table)})
	s := store.New(client, table, cursor.New([]byte("bench-token-key")), wired.Store...)
	const author = "u_author"
	if _, err := s.CreateUser(ctx, store.User{ID: author, Handle: "author", Name: "Author", Email: ptr("a@e.io")}); err != nil {
		return ProjectionCost{}, err
	}
	var c ProjectionCost
	gsi1 := func(fn func(ctx context.Context) error) (float64, error) {
		ctx, m := cost.WithMeter(cost.KeepRequests(ctx))
		err := fn(ctx)
		units := 0.0
		for _, call := range m.Calls() {
			units += costdetail.Where(call)[store.GSI1].Write
		}
		return units, err
	}
	var post store.Post
	var err error
	if c.CreatePost, err = gsi1(func(ctx context.Context) error {
		post, err = s.CreatePost(ctx, author, store.NewPost{Title: title, Body: body})
		return err
	}); err != nil {
		return c, err
	}
	if c.UpdatePost, err = gsi1(func(ctx context.Context) error {
		_, err := s.UpdatePost(ctx, author, post.ID, store.PostEdit{Title: &title, Body: &body})
		return err
	}); err != nil {
		return c, err
	}
	draft, err := s.CreatePost(ctx, author, store.NewPost{Title: title, Body: body, Draft: true})
	if err != nil {
		return c, err
	}
	if c.Publish, err = gsi1(func(ctx context.Context) error { _, err := s.PublishPost(ctx, author, draft.ID); return err }); err != nil {
		return c, err
	}
	for range 18 { // 20 published posts in all
		if _, err := s.CreatePost(ctx, author, store.NewPost{Title: title, Body: body}); err != nil {
			return c, err
		}
	}
	entry, err := client.Query(ctx, &dynamodb.QueryInput{TableName: aws.String(table), IndexName: aws.String(store.GSI1), Limit: aws.Int32(1),
		KeyConditionExpression:    aws.String("gsi1pk = :a AND begins_with(gsi1sk, :p)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": &types.AttributeValueMemberS{Value: store.AuthorPK(author)}, ":p": &types.AttributeValueMemberS{Value: store.PostPrefix}}})
	if err != nil || len(entry.Items) != 1 {
		return c, fmt.Errorf("read an index entry: %v", err)
	}
	c.IndexBytes = itemSize(entry.Items[0]) + 100
	// A page of 20: from the index alone when it projects what is listed,
	// otherwise the index's keys, then the posts' items by BatchGetItem.
	list := func(attrs ...string) (Listing, error) {
		ctx, m := cost.WithMeter(cost.KeepRequests(ctx))
		projected := p.projection.ProjectionType == types.ProjectionTypeAll || !slices.Contains(attrs, "body")
		req := store.PageRequest{Limit: 20, Attributes: append([]string{"id"}, attrs...)}
		if !projected {
			req.Attributes = []string{"id"}
		}
		page, err := s.PostsByAuthor(ctx, author, false, req)
		if err != nil {
			return Listing{}, err
		}
		l := Listing{Posts: len(page.Items), RoundTrips: 1}
		if !projected {
			ids := make([]string, len(page.Items))
			for i, p := range page.Items {
				ids[i] = p.ID
			}
			if _, err := s.Posts(ctx, ids, attrs...); err != nil {
				return Listing{}, err
			}
			l.RoundTrips++
		}
		for _, call := range m.Calls() {
			l.Requests++
			l.Read += call.Read
		}
		return l, nil
	}
	if c.Titles, err = list("title"); err != nil {
		return c, err
	}
	c.Bodies, err = list("title", "body")
	return c, err
}

// itemSize is an item's size as DynamoDB counts it: each attribute's name and
// value in bytes (a number about half its digits).
func itemSize(item map[string]types.AttributeValue) int {
	n := 0
	for name, v := range item {
		n += len(name)
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			n += len(v.Value)
		case *types.AttributeValueMemberN:
			n += (len(v.Value)+1)/2 + 1
		default:
			n++
		}
	}
	return n
}

// PrintProjections writes the table of what each projection of GSI1 costs.
func PrintProjections(w io.Writer, costs []ProjectionCost) {
	fmt.Fprintln(w, "| GSI1 projects | Posts | GSI1 WCU: createPost | updatePost | publishPost | Bytes per post in GSI1 | 20 titles: requests, round trips, RCU, posts on the page | 20 with bodies |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---|---|")
	listing := func(l Listing) string {
		return fmt.Sprintf("%d, %d, %g, %d", l.Requests, l.RoundTrips, l.Read, l.Posts)
	}
	for _, c := range costs {
		fmt.Fprintf(w, "| %s | %s | %g | %g | %g | %d | %s | %s |\n", c.Projection, c.Posts, c.CreatePost, c.UpdatePost, c.Publish,
			c.IndexBytes, listing(c.Titles), listing(c.Bodies))
	}
}
