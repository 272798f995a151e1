package resolver

// Query.trending: the posts most liked and commented in a window
// (store.Trending), the same list for every caller.

import (
	"context"
	"fmt"
	"strconv"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// rankings is what Query.trending reads of the table.
type rankings interface {
	Trending(ctx context.Context, window store.TrendWindow, limit int) ([]store.TrendingPost, error)
}

// DefaultTrending is Query.trending's limit when none is given.
const DefaultTrending = 20

// trendingArgs are Query.trending's arguments.
type trendingArgs struct {
	Window store.TrendWindow `json:"window"`
	Limit  *int              `json:"limit"`
}

func (a *trendingArgs) validate() error {
	if _, ok := store.TrendSpans[a.Window]; !ok {
		return errs.E("Query.trending", errs.Validation, "window must be HOUR, DAY or WEEK")
	}
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > store.MaxTrending) {
		return errs.E("Query.trending", errs.Validation, fmt.Sprintf("limit must be between 1 and %d", store.MaxTrending))
	}
	return nil
}

// trending resolves Query.trending.
func (h *Handler) trending(ctx context.Context, _ *appsync.Event, args trendingArgs) (any, error) {
	limit := DefaultTrending
	if args.Limit != nil {
		limit = *args.Limit
	}
	posts, err := h.store.Trending(ctx, args.Window, limit)
	if err != nil {
		return nil, err
	}
	return trendingConnection(posts), nil
}

// trendingConnection encodes as a TrendingConnection: {"items": [{"post":
// ..., "score": ..., "likeCount": ..., "commentCount": ...}]}.
type trendingConnection []store.TrendingPost

func (c trendingConnection) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// AppendJSON appends the connection as MarshalJSON encodes it.
func (c trendingConnection) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"items":[`...)
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
	return append(dst, "]}"...)
}
