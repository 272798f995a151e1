package live

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// The feed, pushed: Subscription.onFeed, a signed-in reader's own, receives
// each post published by an author the reader follows. The projector
// publishes it from the table's stream (Projection), calling
// Mutation.pushFeed, which only its IAM role may call, once for each chunk
// of the author's followers, sorted by ID: the mutation's value is the post
// and the chunk's readers, and a subscriber's filter (set from the caller's
// identity, never from an argument) matches the readers that contain it.
//
// Exactly once per post and reader: the Lambda answers a chunk only after
// advancing the post's marker (the last reader pushed) from the chunk's
// after to its last reader, on that condition. A chunk pushed before the
// projector was killed is not pushed again (its retry starts after the
// marker, and a chunk sent twice fails its condition: Conflict); a reader
// who unfollowed before the chunk is left out (strongly consistent reads
// of the follows).

// MaxReaderBytes bounds a publication's readers, as JSON (an ID of at most
// 64 characters is at most 67 bytes with its quotes and comma): with the
// largest post (about 81 kB), a publication stays under AppSync's 240 KB
// message limit; 3,589 readers of 36-character IDs (Cognito's subs) fit,
// so 10,000 followers take three publications.
const MaxReaderBytes = 140_000

// pushedTTL is how long a post's marker stays: past the stream's 24-hour
// retention, no record can bring its publication again.
const pushedTTL = 48 * time.Hour

// ReaderBytes is the size of readers as a JSON list.
func ReaderBytes(readers []string) int {
	n := 2
	for i, r := range readers {
		n += len(r) + 2
		if i > 0 {
			n++
		}
	}
	return n
}

// Pushes are the markers of the posts' feed publications, and the reads
// the publication needs of the core's items.
type Pushes struct{ s *store.Store }

// NewPushes returns the markers of s's table.
func NewPushes(s *store.Store) *Pushes { return &Pushes{s: s} }

type pushed struct {
	Through string `dynamodbav:"through"`
}

// Through is the last reader post id's publication reached ("" for none
// yet): a strongly consistent read of its marker.
func (p *Pushes) Through(ctx context.Context, postID string) (string, error) {
	var m pushed
	_, err := p.s.GetConsistent(ctx, "live.Through", store.Key{PK: pushedPK(postID), SK: skPushed}, &m)
	return m.Through, err
}

// FollowerIDs are every follower of the author (store.FollowerIDs).
func (p *Pushes) FollowerIDs(ctx context.Context, authorID string) ([]string, error) {
	return p.s.FollowerIDs(ctx, authorID)
}

// advance moves post id's marker from after ("" for none) to through, on
// that condition: Conflict when it is elsewhere (the chunk pushed already,
// or another push under way).
func (p *Pushes) advance(ctx context.Context, postID, after, through string) error {
	const op = "Mutation.pushFeed"
	name := expression.Name("through")
	cond := name.Equal(expression.Value(after))
	if after == "" {
		cond = expression.AttributeNotExists(name)
	}
	upd := expression.Set(name, expression.Value(through)).
		Set(expression.Name("ttl"), expression.Value(p.s.Now().Add(pushedTTL).Unix()))
	expr, err := expression.NewBuilder().WithUpdate(upd).WithCondition(cond).Build()
	if err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	_, err = p.s.API().UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String(p.s.Table()),
		Key:              store.Key{PK: pushedPK(postID), SK: skPushed}.Attributes(),
		UpdateExpression: expr.Update(), ConditionExpression: expr.Condition(),
		ExpressionAttributeNames: expr.Names(), ExpressionAttributeValues: expr.Values()})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return errs.E(op, errs.Conflict, "the post's publication is not after "+strconv.Quote(after)+": pushed already, or being pushed")
	case err != nil:
		return store.Fail(op, err)
	}
	return nil
}

// following returns the readers who follow author now (strongly
// consistent reads of their follows, a hundred a request).
func (p *Pushes) following(ctx context.Context, author string, readers []string) ([]string, error) {
	keys := make([]store.Key, len(readers))
	for i, r := range readers {
		keys[i] = store.Key{PK: store.UserPK(r), SK: store.FollowsSK(author)}
	}
	got, err := p.s.BatchGet(store.WithConsistentReads(ctx), "Mutation.pushFeed", keys, []string{store.AttrPK})
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(readers))
	for i, r := range readers {
		if _, ok := got[keys[i]]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}

// pushArgs are Mutation.pushFeed's arguments.
type pushArgs struct {
	PostID  string   `json:"postId"`
	After   string   `json:"after"` // null: ""
	Readers []string `json:"readers"`
}

// Push is Mutation.pushFeed's value: the post, and the readers it is for.
type Push struct {
	Post    store.Post `json:"post"`
	Readers []string   `json:"readers"`
}

// Push is Mutation.pushFeed: post postID, if it is published, and those of
// the chunk's readers (sorted, each once, after after, "" for the first
// chunk) who follow its author now, once the post's marker has moved from
// after to the chunk's last reader (Conflict when it is not at after). An
// absent post or a draft is NotFound.
func (p *Pushes) Push(ctx context.Context, postID, after string, readers []string) (Push, error) {
	const op = "Mutation.pushFeed"
	if err := validChunk(postID, after, readers); err != nil {
		return Push{}, errs.E(op, errs.Validation, err.Error())
	}
	ctx = store.WithConsistentReads(ctx)
	post, err := p.s.Post(ctx, postID)
	switch {
	case err != nil:
		return Push{}, err
	case !post.Published():
		return Push{}, errs.E(op, errs.NotFound, "post not found") // a draft is no one's feed's
	}
	following, err := p.following(ctx, post.AuthorID, readers)
	if err != nil {
		return Push{}, err
	}
	if err := p.advance(ctx, postID, after, readers[len(readers)-1]); err != nil {
		return Push{}, err
	}
	return Push{Post: post, Readers: following}, nil
}

// validChunk checks a chunk: valid IDs, the readers sorted, each once,
// after after, within MaxReaderBytes.
func validChunk(postID, after string, readers []string) error {
	switch {
	case !store.ValidID(postID):
		return errors.New("invalid post id")
	case after != "" && !store.ValidID(after):
		return errors.New("invalid after: a reader's id")
	case len(readers) == 0:
		return errors.New("readers is empty")
	case ReaderBytes(readers) > MaxReaderBytes:
		return errors.New("readers take more than MaxReaderBytes")
	case !ascending(append([]string{after}, readers...)):
		return errors.New("readers are not sorted, each once, after after")
	case slices.ContainsFunc(readers, func(r string) bool { return !store.ValidID(r) }):
		return errors.New("invalid reader id")
	}
	return nil
}

// onFeed is Subscription.onFeed's answer: a signed-in caller's filter, the
// publications whose readers contain them; nil (refused) for anyone else.
func onFeed(ev *appsync.Event) (any, error) {
	reader := ev.Identity.UserID()
	if reader == "" {
		return nil, nil
	}
	return map[string]any{"readers": map[string]string{"contains": reader}}, nil
}

// ascending reports whether ids are strictly ascending.
func ascending(ids []string) bool {
	for i := 1; i < len(ids); i++ {
		if ids[i-1] >= ids[i] {
			return false
		}
	}
	return true
}
