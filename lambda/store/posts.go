package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// A post's life: written as a draft or published, published once, edited
// by its author, and deleted with everything its partitions hold. A write
// that read the post first acts on the post as it read it (its version).

// NewPost is what a new post is made of (createPost's input).
type NewPost struct {
	Title, Body string
	Draft       bool // published when false
}

// PostEdit is what an edit of a post changes (updatePost's input): each
// field that is not nil, named as the input names it (json) and the item
// its attribute (dynamodbav).
type PostEdit struct {
	Title *string `json:"title" dynamodbav:"title"`
	Body  *string `json:"body" dynamodbav:"body"`
}

// CreatePost creates a post by authorID with a new ID, and its counter, and
// increments the author's postCount (a draft's when it is published), in
// one transaction. An author without a profile is NotFound.
func (s *Store) CreatePost(ctx context.Context, authorID string, in NewPost) (Post, error) {
	const op = "store.CreatePost"
	if err := CheckIDs(op, authorID); err != nil {
		return Post{}, err
	}
	now := s.now()
	p := Post{ID: s.newID(now), AuthorID: authorID, Title: in.Title, Body: in.Body, CreatedAt: timestamp(now), UpdatedAt: timestamp(now),
		Status: StatusPublished}
	if in.Draft {
		p.Status = StatusDraft
	}
	av, err := marshal(op, newPostItem(p))
	if err != nil {
		return Post{}, err
	}
	counterAV, err := marshal(op, newPostCounter(p))
	if err != nil {
		return Post{}, err
	}
	authorPK := UserPK(authorID)
	noProfile := onCounter(errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)
	author := s.addCount(authorPK, SKCount, "postCount", countUp, noProfile)
	if in.Draft { // counted when published
		author = s.exists(authorPK, SKCount, noProfile)
	}
	collision := func(map[string]types.AttributeValue) error {
		return errs.E(op, errs.Conflict, "post ID collision; retry")
	}
	err = s.transact(ctx, op, s.put(av, collision), s.put(counterAV, collision), author)
	if err != nil {
		return Post{}, err
	}
	return p, nil
}

// PublishPost publishes callerID's draft in one transaction conditioned on it
// as read (read again up to three times): status PUBLISHED, its GSI1 place a
// ULID of now, the author's postCount + 1. NotFound when absent, Unauthorized
// for anyone else, Conflict when published already.
func (s *Store) PublishPost(ctx context.Context, callerID, id string) (Post, error) {
	for attempt := 1; ; attempt++ {
		p, err := s.publishPost(ctx, callerID, id)
		if !errors.Is(err, errEdited) {
			return p, err
		}
		if attempt == 3 {
			return Post{}, errs.E("store.PublishPost", errs.Conflict, "the post changed while it was being published; retry")
		}
	}
}

// errEdited marks a write whose post was edited between its read and its
// transaction: it starts over from a fresh read.
var errEdited = errors.New("the post was edited meanwhile")

// publishPost is one attempt of PublishPost, conditioned on the post as it
// read it (its version): an edit meanwhile makes it errEdited.
func (s *Store) publishPost(ctx context.Context, callerID, id string) (Post, error) {
	const op = "store.PublishPost"
	if err := CheckIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	var p Post
	found, err := s.GetConsistent(ctx, op, Key{PostPK(id), SKMetadata}, &p)
	switch {
	case err != nil:
		return Post{}, err
	case !found || !p.VisibleTo(callerID): // someone else's draft is, to them, absent
		return Post{}, errs.E(op, errs.NotFound, "post not found")
	case p.AuthorID != callerID:
		return Post{}, errs.E(op, errs.Unauthorized, "only the post's author may publish it")
	case p.Published():
		return Post{}, errs.E(op, errs.Conflict, "the post is published already")
	}
	now := s.now()
	edited := asVersion(itemExists, p.Version)
	p.Status, p.UpdatedAt, p.Version = StatusPublished, timestamp(now), p.Version+1
	publish := expression.Set(expression.Name("status"), expression.Value(StatusPublished)).
		Set(expression.Name(AttrGSI1SK), expression.Value(PublishedSK(s.newID(now)))).
		Set(expression.Name("updatedAt"), expression.Value(p.UpdatedAt)).
		Add(expression.Name("v"), expression.Value(1))
	changed := func(old map[string]types.AttributeValue) error {
		if len(old) == 0 {
			return errs.E(op, errs.NotFound, "post not found")
		}
		if status, _ := old["status"].(*types.AttributeValueMemberS); status != nil && status.Value == StatusDraft {
			return errEdited // still a draft of the caller's, edited since it was read
		}
		return errs.E(op, errs.Conflict, "the post is published already")
	}
	post := txAction{key: Key{PostPK(id), SKMetadata}, update: &publish, cond: edited, failed: changed}
	status := expression.Set(expression.Name("status"), expression.Value(StatusPublished)).Set(expression.Name("authorId"), expression.Value(callerID))
	counter := always(txAction{key: Key{PostPK(id), SKCount}, update: &status}) // the status comments and likes check
	authorPK := UserPK(callerID)
	err = s.transact(ctx, op,
		onlyIf(onlyIf(post, "authorId", callerID), "status", StatusDraft),
		counter,
		s.addCount(authorPK, SKCount, "postCount", countUp, onCounter(errs.E(op, errs.NotFound, "the post's author has no profile"), nil)))
	if err != nil {
		return Post{}, err
	}
	return p, nil
}

// UpdatePost sets what edit changes, updatedAt and version + 1, if callerID
// is the author: one UpdateItem, then a GetItem of its counts. NotFound when
// absent (or someone else's draft), Unauthorized for anyone else, Validation
// when edit changes nothing.
func (s *Store) UpdatePost(ctx context.Context, callerID, id string, edit PostEdit) (Post, error) {
	const op = "store.UpdatePost"
	if err := CheckIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	upd := changes{}
	upd.setFields(edit)
	if upd.n == 0 {
		return Post{}, errs.E(op, errs.Validation, "nothing to update")
	}
	now := timestamp(s.now())
	upd.set("updatedAt", &now)
	upd.bump()
	var p Post
	err := s.update(ctx, op, Key{PostPK(id), SKMetadata}, upd, "authorId", callerID,
		errs.E(op, errs.NotFound, "post not found"), errs.E(op, errs.Unauthorized, "only the post's author may change it"), &p)
	if err != nil {
		return Post{}, err
	}
	return p, addCounter(ctx, s, op, PostPK(id), &p)
}

// DeletePost deletes callerID's post (and takes 1 from the author's postCount
// if published) in one transaction conditioned on what it read, then sweeps
// its partition (sweep.go); ErrSweepUnfinished with the post when the sweep
// did not finish, which a retried DeletePost finishes.
func (s *Store) DeletePost(ctx context.Context, callerID, id string) (Post, error) {
	return s.deletePost(ctx, callerID, id, 1)
}

// errStatusChanged marks a deletion whose post was published or edited
// between its read and its transaction.
var errStatusChanged = errors.New("the post's status changed")

func (s *Store) deletePost(ctx context.Context, callerID, id string, attempt int) (Post, error) {
	const op = "store.DeletePost"
	if err := CheckIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	var p Post
	found, err := readCounted(ctx, s, op, PostPK(id), true, &p)
	if err != nil {
		return Post{}, err
	}
	if !found {
		parts, err := s.partsOf(ctx, PostPK(id), -1)
		if err == nil {
			err = s.sweepPost(ctx, op, id, parts)
		}
		if err != nil {
			return Post{}, err
		}
		return Post{}, errs.E(op, errs.NotFound, "post not found")
	}
	if !p.VisibleTo(callerID) { // someone else's draft is, to them, absent
		return Post{}, errs.E(op, errs.NotFound, "post not found")
	}
	if p.AuthorID != callerID {
		return Post{}, errs.E(op, errs.Unauthorized, "only the post's author may delete it")
	}
	// The post is removed as it was read: published (and counted) or a
	// draft. Should it change in between (published meanwhile), the
	// condition fails and the deletion starts over from a fresh read.
	remove := onlyIf(s.remove(PostPK(id), SKMetadata, func(old map[string]types.AttributeValue) error {
		if len(old) == 0 {
			return errs.E(op, errs.NotFound, "post not found")
		}
		return errStatusChanged
	}), "authorId", callerID)
	remove.cond = asVersion(remove.cond, p.Version) // an edit meanwhile: read it again, to return it
	// The counter goes as read too: with parts or not (none for a post
	// older than counters), and the part counters with it (a hot post's
	// shards'), so that no like lands in a part afterwards.
	counter := txAction{key: Key{PostPK(id), SKCount}, delete: true, cond: expression.AttributeNotExists(expression.Name("shards")),
		failed: func(map[string]types.AttributeValue) error { return errStatusChanged }}
	parts, err := s.partsOf(ctx, PostPK(id), p.Shards)
	if err != nil {
		return Post{}, err
	}
	if p.Shards > 0 {
		counter.cond = expression.Name("shards").Equal(expression.Value(p.Shards))
	}
	shards := []txAction{counter}
	for _, part := range parts {
		shards = append(shards, always(s.remove(part, SKShard, nil)))
	}
	if p.Published() {
		authorPK := UserPK(p.AuthorID)
		err = s.transact(ctx, op, append([]txAction{published(remove),
			s.addCount(authorPK, SKCount, "postCount", countDown, onCounter(errs.E(op, errs.NotFound, "the post's author has no profile"), nil))}, shards...)...)
	} else {
		err = s.transact(ctx, op, append([]txAction{onlyIf(remove, "status", StatusDraft)}, shards...)...)
	}
	if errors.Is(err, errStatusChanged) {
		if attempt < 3 {
			return s.deletePost(ctx, callerID, id, attempt+1)
		}
		return Post{}, errs.E(op, errs.Conflict, "the post changed while it was being deleted; retry")
	}
	if err != nil {
		return Post{}, err
	}
	if err := s.sweepPost(ctx, op, id, parts); err != nil {
		return p, errors.Join(ErrSweepUnfinished, err)
	}
	return p, nil
}

// PublishedPost reports whether the post exists and is published (strongly
// consistent GetItem of its counter, or of its own item for a post older
// than counters).
func (s *Store) PublishedPost(ctx context.Context, postID string) (bool, error) {
	const op = "store.PublishedPost"
	if err := CheckIDs(op, postID); err != nil {
		return false, err
	}
	var c postCounterItem
	found, err := s.GetConsistent(ctx, op, Key{PostPK(postID), SKCount}, &c)
	if err != nil || found {
		return found && c.Status != StatusDraft, err
	}
	var p Post
	found, err = s.GetConsistent(ctx, op, Key{PostPK(postID), SKMetadata}, &p)
	return found && p.Published(), err
}
