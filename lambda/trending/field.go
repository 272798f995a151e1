package trending

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
)

// SDL is the feature's part of the schema (schema.graphql): Query.trending
// and its types, merged into the core's where the feature is wired in.
//
//go:embed schema.graphql
var SDL string

// Routes are the feature's routed fields: Query.trending, whose items
// carry their Post as "post".
var Routes = []resolver.Route{
	{Type: "Query", Field: "trending", Returns: "Post", Shape: resolver.Connection, Member: "post"},
}

// Feature is the feature's part of the Lambda: Query.trending, read from
// b. resolver.WithFeature(trending.Feature(b)) wires it in.
func Feature(b *Buckets) resolver.Feature {
	return resolver.Feature{Routes: Routes, Fields: map[string]resolver.Field{"Query.trending": resolver.Each(rankingOf(b))}}
}

// defaultLimit is Query.trending's limit when none is given.
const defaultLimit = 20

// args are Query.trending's arguments.
type args struct {
	Window Window `json:"window"`
	Limit  *int   `json:"limit"`
}

func (a *args) validate() error {
	if _, ok := Spans[a.Window]; !ok {
		return errs.E("Query.trending", errs.Validation, "window must be HOUR, DAY or WEEK")
	}
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > MaxPosts) {
		return errs.E("Query.trending", errs.Validation, fmt.Sprintf("limit must be between 1 and %d", MaxPosts))
	}
	return nil
}

// rankingOf resolves Query.trending from b: a TrendingConnection.
func rankingOf(b *Buckets) func(ctx context.Context, _ *appsync.Event, a args) (any, error) {
	return func(ctx context.Context, _ *appsync.Event, a args) (any, error) {
		if err := a.validate(); err != nil {
			return nil, err
		}
		limit := defaultLimit
		if a.Limit != nil {
			limit = *a.Limit
		}
		posts, err := b.Ranking(ctx, a.Window, limit)
		if err != nil {
			return nil, err
		}
		return connection(posts), nil
	}
}

// connection encodes as a TrendingConnection: {"items": [{"score": ...,
// "likeCount": ..., "commentCount": ..., "post": ...}]}.
type connection []Ranked

func (c connection) MarshalJSON() ([]byte, error) {
	dst := []byte(`{"items":[`)
	for i, t := range c {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"score":`...)
		dst = strconv.AppendInt(dst, int64(t.Score()), 10)
		dst = append(dst, `,"likeCount":`...)
		dst = strconv.AppendInt(dst, int64(t.Likes), 10)
		dst = append(dst, `,"commentCount":`...)
		dst = strconv.AppendInt(dst, int64(t.Comments), 10)
		dst = append(t.Post.AppendJSON(append(dst, `,"post":`...)), '}')
	}
	return append(dst, "]}"...), nil
}
