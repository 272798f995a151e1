package live

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/oklog/ulid/v2"

	"github.com/example/appsync-dynamo/lambda/awsenv"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Caller is what the projection calls of the API, as an IAM caller
// (AppSync, in AWS; the local AppSync in make dev): Mutation.invalidatePost,
// which ends the subscriptions of one subscription field to a post, and
// Mutation.pushFeed, which publishes a post to a chunk of its readers.
type Caller interface {
	InvalidatePost(ctx context.Context, postID, subscription string) error
	PushFeed(ctx context.Context, postID, after string, readers []string) error
}

// Readers is what the projection reads of the table: how far a post's
// publication has gone (Pushes.Through), and an author's followers.
type Readers interface {
	Through(ctx context.Context, postID string) (string, error)
	FollowerIDs(ctx context.Context, authorID string) ([]string, error)
}

// Projection keeps subscribers up to date from the table's stream (the
// projector applies it). A post's own item removed, it calls
// Mutation.invalidatePost once for each subscription field, so that each
// call asks AppSync for one invalidation; a record that comes again ends
// nothing more (the subscriptions are gone) and fails nothing. A post
// published (created published, or a draft published), it pushes the post
// to its author's followers (pushFeed), chunk after chunk from where its
// marker says the publication stopped: a record that comes again, or a
// projector killed and run again, pushes no reader twice.
type Projection struct {
	api        Caller
	readers    Readers
	chunkBytes int // MaxReaderBytes, but in tests
}

// NewProjection returns the projection, reading through readers (NewPushes
// of the store) and calling api.
func NewProjection(readers Readers, api Caller) *Projection {
	return &Projection{api: api, readers: readers, chunkBytes: MaxReaderBytes}
}

// StreamFilters are the records the projection applies: a post's own item,
// written or removed.
var StreamFilters = []map[string]any{
	{"dynamodb": map[string]any{"Keys": map[string]any{
		store.AttrPK: map[string]any{"S": []any{map[string]any{"prefix": store.PostPK("")}}},
		store.AttrSK: map[string]any{"S": []any{store.SKMetadata}},
	}}},
}

// TableActions and IndexActions are the DynamoDB operations the projection
// performs (a post's marker: GetItem; an author's followers: Query, on GSI2
// or, for a hot author, the table), which the stack grants the projector.
var (
	TableActions = []string{"dynamodb:GetItem", "dynamodb:Query"}
	IndexActions = []string{"dynamodb:Query"}
)

// APIFields are the fields of the API the projection calls, which the
// projector's role may call and no more.
var APIFields = []string{"Mutation.invalidatePost", "Mutation.pushFeed"}

// Apply ends the subscriptions to the post whose item r removes, pushes the
// post r publishes, and ignores every other record.
func (p *Projection) Apply(ctx context.Context, r events.DynamoDBEventRecord) error {
	id, isPost := strings.CutPrefix(projector.ImageString(r.Change.Keys, store.AttrPK), store.PostPK(""))
	if !isPost || projector.ImageString(r.Change.Keys, store.AttrSK) != store.SKMetadata {
		return nil
	}
	if r.EventName == string(events.DynamoDBOperationTypeRemove) {
		return p.invalidate(ctx, id)
	}
	place, author := projector.PublishedPlace(r.Change.NewImage), projector.ImageString(r.Change.NewImage, "authorId")
	if place != "" && author != "" && projector.PublishedPlace(r.Change.OldImage) == "" && !old(place, time.Now()) {
		return p.push(ctx, id, author)
	}
	return nil
}

// newWithin is how recent a post's publication must be to be pushed: the
// stream's retention. A record of a post published before it is a load or
// a restore of the table (make dev's sample data), not a publication.
const newWithin = 24 * time.Hour

// old reports whether a post was published more than newWithin before now
// (its place, projector.PublishedPlace, holds the ULID of its publication; a
// place without one is not old).
func old(place string, now time.Time) bool {
	id, err := ulid.ParseStrict(strings.TrimPrefix(place, store.PostPrefix))
	return err == nil && now.Sub(ulid.Time(id.Time())) > newWithin
}

// push publishes post id to author's followers after its marker, sorted,
// in chunks of MaxReaderBytes. A post gone, or no longer published, by the
// time a chunk is pushed (NotFound) ends it: it enters no feed.
func (p *Projection) push(ctx context.Context, id, author string) error {
	after, err := p.readers.Through(ctx, id)
	if err != nil {
		return err
	}
	followers, err := p.readers.FollowerIDs(ctx, author)
	if err != nil {
		return err
	}
	slices.Sort(followers)
	followers = slices.Compact(followers)
	rest := followers[sort.SearchStrings(followers, after):]
	if len(rest) > 0 && rest[0] == after {
		rest = rest[1:]
	}
	for _, chunk := range chunks(rest, p.chunkBytes) {
		err := p.api.PushFeed(ctx, id, after, chunk)
		var refused *APIError
		if errors.As(err, &refused) && refused.Type == errs.NotFound.String() {
			return nil
		}
		if err != nil {
			return fmt.Errorf("pushing post %s to its readers after %q: %w", id, after, err)
		}
		after = chunk[len(chunk)-1]
	}
	return nil
}

// chunks splits readers into chunks of at most limit bytes each, as JSON
// (ReaderBytes).
func chunks(readers []string, limit int) [][]string {
	var out [][]string
	for len(readers) > 0 {
		n, size := 0, 2
		for n < len(readers) && size+len(readers[n])+3 <= limit {
			size += len(readers[n]) + 3
			n++
		}
		n = max(n, 1) // an ID longer than limit: alone (a valid one never is)
		out, readers = append(out, readers[:n]), readers[n:]
	}
	return out
}

// invalidate ends every subscription to post id, a field at a time.
func (p *Projection) invalidate(ctx context.Context, id string) error {
	for _, field := range slices.Sorted(maps.Keys(subscribers)) {
		if err := p.api.InvalidatePost(ctx, id, field); err != nil {
			return fmt.Errorf("ending %s subscriptions to post %s: %w", field, id, err)
		}
	}
	return nil
}

// invalidatePost is the mutation the projection sends.
const invalidatePost = `mutation Invalidate($id: ID!, $s: String!) { invalidatePost(id: $id, subscription: $s) }`

// GraphQL sends a GraphQL request to the API as an IAM caller and returns
// the HTTP status and body of its response.
type GraphQL func(ctx context.Context, query string, vars map[string]any) (status int, body []byte, err error)

// Signed is the GraphQL of the deployed API at url (the projector's
// GRAPHQL_URL), signed with cfg's credentials (the projector's role).
func Signed(client aws.HTTPClient, cfg aws.Config, url string) GraphQL {
	return func(ctx context.Context, query string, vars map[string]any) (int, []byte, error) {
		if url == "" {
			return 0, nil, errors.New("GRAPHQL_URL is not set: the projector cannot reach the API")
		}
		resp, raw, err := awsenv.GraphQL(ctx, client, cfg, url, query, vars)
		if err != nil {
			return 0, nil, err
		}
		return resp.StatusCode, raw, nil
	}
}

// API is the Caller that sends its mutations through send.
type API GraphQL

// PushFeedMutation is the mutation the projection pushes a chunk with: it
// selects the post's own fields and the readers, which onFeed's filter
// reads ($id, $after, $readers).
const PushFeedMutation = `mutation Push($id: ID!, $after: ID, $readers: [ID!]!) {
  pushFeed(postId: $id, after: $after, readers: $readers) {
    post { id authorId title body status createdAt updatedAt commentCount likeCount } readers
  }
}`

// InvalidatePost calls Mutation.invalidatePost; a GraphQL error fails it,
// and the stream retries the record.
func (send API) InvalidatePost(ctx context.Context, postID, subscription string) error {
	return send.call(ctx, invalidatePost, map[string]any{"id": postID, "s": subscription})
}

// PushFeed calls Mutation.pushFeed with the chunk of readers after after
// ("" for the first); a GraphQL error fails it (an *APIError).
func (send API) PushFeed(ctx context.Context, postID, after string, readers []string) error {
	vars := map[string]any{"id": postID, "after": nil, "readers": readers}
	if after != "" {
		vars["after"] = after
	}
	return send.call(ctx, PushFeedMutation, vars)
}

// APIError is the first GraphQL error of an answer.
type APIError struct{ Type, Message string }

func (e *APIError) Error() string { return e.Type + ": " + e.Message }

func (send API) call(ctx context.Context, query string, vars map[string]any) error {
	status, raw, err := send(ctx, query, vars)
	if err != nil {
		return err
	}
	var r struct {
		Errors []struct {
			ErrorType string `json:"errorType"`
			Message   string `json:"message"`
		} `json:"errors"`
	}
	switch {
	case json.Unmarshal(raw, &r) != nil:
		return fmt.Errorf("HTTP %d, not a GraphQL response: %.200s", status, raw)
	case len(r.Errors) > 0:
		return &APIError{Type: r.Errors[0].ErrorType, Message: r.Errors[0].Message}
	case status != 200:
		return fmt.Errorf("HTTP %d", status)
	}
	return nil
}
