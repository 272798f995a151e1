package store

import (
	"context"
	"errors"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/errs"
)

// The writes. Each is atomic: one conditional UpdateItem, or one
// TransactWriteItems that writes a child and adjusts its parent's count, on
// the parent's counter item, together (see transact and counts.go). Ownership is a condition of the write itself, never
// a read followed by a write. Their errors: Validation (an ID or handle that
// may not go into a key), NotFound, Unauthorized (not the owner), Conflict,
// Throttled, Internal.

func marshal(op string, v any) (map[string]types.AttributeValue, error) {
	av, err := attributevalue.MarshalMap(v)
	if err != nil {
		return nil, errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return av, nil
}

func unmarshal(op string, item map[string]types.AttributeValue, v any) error {
	if err := attributevalue.UnmarshalMap(item, v); err != nil {
		return errs.Wrap(op, errs.Internal, "internal error", err)
	}
	return nil
}

const (
	countUp   = 1
	countDown = -1
)

// CreateUser creates u's profile and its counter (its counts zero,
// CreatedAt now) and claims its handle, in one transaction. A second profile for the same ID or a
// handle already taken is a Conflict; nothing is written then.
func (s *Store) CreateUser(ctx context.Context, u User) (User, error) {
	const op = "store.CreateUser"
	if err := checkIDs(op, u.ID); err != nil {
		return User{}, err
	}
	if !ValidHandle(u.Handle) {
		return User{}, errs.E(op, errs.Validation, "invalid handle: must match ^[a-z0-9_]{3,30}$")
	}
	u.CreatedAt = timestamp(s.now())
	u.PostCount, u.FollowerCount, u.FollowingCount = 0, 0, 0
	userAV, err := marshal(op, newUserItem(u))
	if err != nil {
		return User{}, err
	}
	handleAV, err := marshal(op, newHandleItem(u))
	if err != nil {
		return User{}, err
	}
	counterAV, err := marshal(op, newUserCounter(u))
	if err != nil {
		return User{}, err
	}
	err = s.transact(ctx, op,
		s.put(counterAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "a profile already exists for this user")
		}),
		s.put(userAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "a profile already exists for this user")
		}),
		s.put(handleAV, func(map[string]types.AttributeValue) error {
			return errs.E(op, errs.Conflict, "handle is taken")
		}))
	if err != nil {
		return User{}, err
	}
	return u, nil
}

// UpdateUser sets the user's name and bio (an empty bio removes it); nil
// leaves a field as it is. One conditional UpdateItem, then a GetItem of its
// counts; an absent profile is NotFound.
func (s *Store) UpdateUser(ctx context.Context, id string, name, bio *string) (User, error) {
	const op = "store.UpdateUser"
	if err := checkIDs(op, id); err != nil {
		return User{}, err
	}
	upd := changes{}
	upd.set("name", name)
	if bio != nil && *bio == "" {
		upd.remove("bio")
	} else {
		upd.set("bio", bio)
	}
	var u User
	if err := s.update(ctx, op, itemKey{UserPK(id), SKMetadata}, upd, "", "", errs.E(op, errs.NotFound, "no profile: call createUser first"), nil, &u); err != nil {
		return User{}, err
	}
	return u, addCounter(ctx, s, op, UserPK(id), &u)
}

// CreatePost creates a post by authorID with a new ID, and its counter, and
// increments the author's postCount, in one transaction. An author without a profile is
// NotFound.
func (s *Store) CreatePost(ctx context.Context, authorID, title, body string, draft bool) (Post, error) {
	const op = "store.CreatePost"
	if err := checkIDs(op, authorID); err != nil {
		return Post{}, err
	}
	now := s.now()
	p := Post{ID: s.newID(now), AuthorID: authorID, Title: title, Body: body, CreatedAt: timestamp(now), UpdatedAt: timestamp(now),
		Status: StatusPublished}
	if draft {
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
	noProfile := onCounter(authorPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)
	author := s.addCount(authorPK, SKCount, "postCount", countUp, noProfile)
	if draft { // counted when published
		author = s.exists(authorPK, SKCount, noProfile)
	}
	collision := func(map[string]types.AttributeValue) error {
		return errs.E(op, errs.Conflict, "post ID collision; retry")
	}
	err = s.counting(ctx, op, func() error {
		return s.transact(ctx, op, s.put(av, collision), s.put(counterAV, collision), author)
	})
	if err != nil {
		return Post{}, err
	}
	return p, nil
}

// PublishPost publishes the draft, if callerID is its author: in one
// transaction, conditioned on the post still being that author's draft as
// read (an edit meanwhile: read again, up to three times), its
// status (and its counter's) becomes PUBLISHED, its place in the author's
// posts (GSI1's sort key) becomes a ULID of the publication time, and the
// author's postCount grows by one. NotFound when absent (someone else's draft is absent to them),
// Unauthorized for anyone else, Conflict when the post is published already
// (a post is published once).
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
// read it (its updatedAt): an edit meanwhile makes it errEdited.
func (s *Store) publishPost(ctx context.Context, callerID, id string) (Post, error) {
	const op = "store.PublishPost"
	if err := checkIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	var p Post
	found, err := s.getConsistent(ctx, op, itemKey{PostPK(id), SKMetadata}, &p)
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
	post := txAction{key: itemKey{PostPK(id), SKMetadata}, update: &publish, cond: edited, failed: changed}
	status := expression.Set(expression.Name("status"), expression.Value(StatusPublished)).Set(expression.Name("authorId"), expression.Value(callerID))
	counter := always(txAction{key: itemKey{PostPK(id), SKCount}, update: &status}) // written here for a draft older than counters
	authorPK := UserPK(callerID)
	err = s.counting(ctx, op, func() error {
		return s.transact(ctx, op,
			onlyIf(onlyIf(post, "authorId", callerID), "status", StatusDraft),
			counter,
			s.addCount(authorPK, SKCount, "postCount", countUp, onCounter(authorPK, errs.E(op, errs.NotFound, "the post's author has no profile"), nil)))
	})
	if err != nil {
		return Post{}, err
	}
	return p, nil
}

// UpdatePost sets the post's title and body (nil leaves a field as it is)
// and its updatedAt, if callerID is its author: one UpdateItem whose
// condition checks the author (a post's counts are on another item, so a
// body's rewrite never races a comment), then a GetItem of its counts. NotFound when absent (someone else's draft is
// absent to them), Unauthorized for anyone else.
func (s *Store) UpdatePost(ctx context.Context, callerID, id string, title, body *string) (Post, error) {
	const op = "store.UpdatePost"
	if err := checkIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	upd := changes{}
	upd.set("title", title)
	upd.set("body", body)
	now := timestamp(s.now())
	upd.set("updatedAt", &now)
	upd.bump()
	var p Post
	err := s.update(ctx, op, itemKey{PostPK(id), SKMetadata}, upd, "authorId", callerID,
		errs.E(op, errs.NotFound, "post not found"), errs.E(op, errs.Unauthorized, "only the post's author may change it"), &p)
	if err != nil {
		return Post{}, err
	}
	return p, addCounter(ctx, s, op, PostPK(id), &p)
}

// DeletePost deletes the post, if callerID is its author, and (when it was
// published) decrements the author's postCount, in one transaction
// conditioned on the status and the version it read, so that it returns the
// post it deleted; then it deletes every comment in the
// post's partition (Query pages of keys, BatchWriteItem of 25, unprocessed
// items retried). It returns the deleted post; with ErrSweepUnfinished when
// the deletion committed and the sweep did not finish.
//
// Once the post is gone no comment can be added (createComment requires the
// post), so the sweep sees every comment. Should the sweep be interrupted, a
// retried DeletePost of the same ID sweeps the rest before reporting
// NotFound.
func (s *Store) DeletePost(ctx context.Context, callerID, id string) (Post, error) {
	return s.deletePost(ctx, callerID, id, 1)
}

// errStatusChanged marks a deletion whose post was published or edited
// between its read and its transaction.
var errStatusChanged = errors.New("the post's status changed")

func (s *Store) deletePost(ctx context.Context, callerID, id string, attempt int) (Post, error) {
	const op = "store.DeletePost"
	if err := checkIDs(op, callerID, id); err != nil {
		return Post{}, err
	}
	var p Post
	found, err := readCounted(ctx, s, op, PostPK(id), true, &p)
	if err != nil {
		return Post{}, err
	}
	if !found {
		if err := s.sweepPost(ctx, op, id, -1); err != nil {
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
	// The counter goes as read too: hot or not (none for a post older than
	// counters), and a hot post's shard counters with it, so that no like
	// lands in a shard afterwards.
	counter := txAction{key: itemKey{PostPK(id), SKCount}, delete: true, cond: expression.AttributeNotExists(expression.Name("shards")),
		failed: func(map[string]types.AttributeValue) error { return errStatusChanged }}
	shards := []txAction{counter}
	if p.Shards > 0 {
		counter.cond = expression.Name("shards").Equal(expression.Value(p.Shards))
		shards[0] = counter
		for n := range p.Shards {
			shards = append(shards, always(s.remove(ShardPK(id, n), SKShard, nil)))
		}
	}
	if p.Published() {
		authorPK := UserPK(p.AuthorID)
		err = s.counting(ctx, op, func() error {
			return s.transact(ctx, op, append([]txAction{published(remove),
				s.addCount(authorPK, SKCount, "postCount", countDown, onCounter(authorPK, errs.E(op, errs.NotFound, "the post's author has no profile"), nil))}, shards...)...)
		})
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
	if err := s.sweepPost(ctx, op, id, p.Shards); err != nil {
		return p, errors.Join(ErrSweepUnfinished, err)
	}
	return p, nil
}

// sweepPost deletes what remains of the deleted post id: the items of its
// shards (shards of them; -1: as many as the marker in its partition says,
// none without one), then of its own partition, the marker last, so that an
// interrupted sweep is finished by the next.
func (s *Store) sweepPost(ctx context.Context, op, id string, shards int) error {
	if shards < 0 {
		var marker struct {
			Shards int `dynamodbav:"shards"`
		}
		if _, err := s.getConsistent(ctx, op, itemKey{PostPK(id), SKHotMarker}, &marker); err != nil {
			return err
		}
		shards = marker.Shards
	}
	for n := range shards {
		if err := s.deletePartition(ctx, op, id, ShardPK(id, n)); err != nil {
			return err
		}
	}
	return s.deletePartition(ctx, op, id, PostPK(id))
}

// ErrSweepUnfinished is returned, with the deleted post, by a DeletePost
// whose deletion committed but whose sweep of the post's comments and likes
// did not finish (the deadline, a failing BatchWriteItem): the deletion
// stands and must be answered as done. What remains is swept by a later
// DeletePost of the same ID; User.comments leaves those comments out
// meanwhile.
var ErrSweepUnfinished = errors.New("the post is deleted; some of its comments and likes remain to be swept")

// CreateComment adds a comment by authorID to the post and increments its
// commentCount, in one transaction conditioned on the post being published
// and the author's profile existing (both checked on their counter items) (NotFound otherwise, and nothing is
// written): a comment whose author has no profile would make every read of
// its author fail, and a draft takes no comments.
//
// A hot post's comment goes to one of its shards (commentHot); the comment
// that finds HotThreshold comments on a post's counter turns it hot first.
func (s *Store) CreateComment(ctx context.Context, authorID, postID, body string) (Comment, error) {
	const op = "store.CreateComment"
	if err := checkIDs(op, authorID, postID); err != nil {
		return Comment{}, err
	}
	now := s.now()
	c := Comment{ID: s.newID(now), PostID: postID, AuthorID: authorID, Body: body, CreatedAt: timestamp(now)}
	if s.hot.of(postID) > 0 {
		return s.commentHot(ctx, op, c)
	}
	av, err := marshal(op, newCommentItem(c))
	if err != nil {
		return Comment{}, err
	}
	postPK, authorPK := PostPK(postID), UserPK(authorID)
	notFound := errs.E(op, errs.NotFound, "post not found")
	err = s.counting(ctx, op, func() error {
		return s.transact(ctx, op,
			s.put(av, func(map[string]types.AttributeValue) error {
				return errs.E(op, errs.Conflict, "comment ID collision; retry")
			}),
			notHot(belowThreshold(published(s.addCount(postPK, SKCount, "commentCount", countUp, onCounter(postPK, notFound, nil))), "commentCount")),
			s.exists(authorPK, SKCount, onCounter(authorPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)))
	})
	var hot *errHot
	switch {
	case errors.Is(err, errPastThreshold): // the post turns hot, and takes the comment in a shard
		if err := s.MakeHot(ctx, postID); err != nil {
			return Comment{}, err
		}
		if s.hot.of(postID) == 0 { // not published: MakeHot leaves it
			return Comment{}, notFound
		}
		return s.commentHot(ctx, op, c)
	case errors.As(err, &hot): // turned hot since this store last knew
		s.hot.learn(postID, hot.shards)
		return s.commentHot(ctx, op, c)
	case err != nil:
		return Comment{}, err
	}
	return c, nil
}

// DeleteComment deletes the comment and decrements its post's commentCount
// in one transaction, if callerID is the comment's author or the post's
// author: the transaction's condition checks whichever applies. It returns
// the deleted comment; NotFound when absent, Unauthorized for anyone else.
func (s *Store) DeleteComment(ctx context.Context, callerID, postID, id string) (Comment, error) {
	const op = "store.DeleteComment"
	if err := checkIDs(op, callerID, postID, id); err != nil {
		return Comment{}, err
	}
	// In the post's own partition, or (a hot post's) in its shard.
	var c Comment
	pk := PostPK(postID)
	found, err := s.getConsistent(ctx, op, itemKey{pk, CommentSK(id)}, &c)
	if err == nil && !found {
		pk = ShardPK(postID, commentShard(id))
		found, err = s.getConsistent(ctx, op, itemKey{pk, CommentSK(id)}, &c)
	}
	if err != nil {
		return Comment{}, err
	}
	if !found {
		return Comment{}, errs.E(op, errs.NotFound, "comment not found")
	}
	notAllowed := errs.E(op, errs.Unauthorized, "only the comment's author or the post's author may delete it")
	notFound := errs.E(op, errs.NotFound, "post not found")
	deleteComment := s.remove(pk, CommentSK(id), notFoundOr(op, "comment not found", nil))
	decrement := s.addCount(pk, SKCount, "commentCount", countDown, onCounter(pk, notFound, notAllowed))
	if pk != PostPK(postID) { // counted on the shard's counter, which holds the post's author too
		decrement = s.shardCount(pk, "commentCount", countDown, notFound)
		decrement.failed = notFoundOr(op, "post not found", notAllowed)
	}
	transact := func() error {
		if c.AuthorID == callerID {
			return s.transact(ctx, op, onlyIf(deleteComment, "authorId", callerID), decrement)
		}
		return s.transact(ctx, op, deleteComment, onlyIf(decrement, "authorId", callerID)) // the post's author: on its counter
	}
	if pk == PostPK(postID) {
		err = s.counting(ctx, op, transact)
	} else {
		err = transact()
	}
	if err != nil {
		return Comment{}, err
	}
	return c, nil
}

// errExists marks a put that found its item already there.
var errExists = errors.New("item exists")

// Follow records that followerID follows followedID and increments both
// users' counts, in one transaction. Following again changes nothing and
// returns the existing follow. Following yourself is a Validation error; an
// unknown user is NotFound.
func (s *Store) Follow(ctx context.Context, followerID, followedID string) (Follow, error) {
	const op = "store.Follow"
	if err := checkIDs(op, followerID, followedID); err != nil {
		return Follow{}, err
	}
	if followerID == followedID {
		return Follow{}, errs.E(op, errs.Validation, "you cannot follow yourself")
	}
	now := s.now()
	f := Follow{FollowerID: followerID, FollowedID: followedID, CreatedAt: timestamp(now)}
	item := newFollowItem(f)
	item.Version = s.newID(now)
	av, err := marshal(op, item)
	if err != nil {
		return Follow{}, err
	}
	var existing map[string]types.AttributeValue
	if shards := s.hotUsers.of(followedID); shards > 0 {
		err = s.followHot(ctx, op, item, shards, &existing)
	} else {
		err = s.counting(ctx, op, func() error {
			counts := s.followCounts(op, followerID, followedID, countUp)
			counts[1] = notHot(belowThreshold(counts[1], "followerCount")) // the followed user's
			return s.transact(ctx, op,
				append([]txAction{s.put(av, func(old map[string]types.AttributeValue) error { existing = old; return errExists })}, counts...)...)
		})
		var hot *errHot
		switch {
		case errors.Is(err, errPastThreshold): // the user turns hot, and takes the follow in a shard
			if err = s.MakeUserHot(ctx, followedID); err == nil {
				if shards := s.hotUsers.of(followedID); shards > 0 {
					err = s.followHot(ctx, op, item, shards, &existing)
				} else { // its counter went meanwhile (MakeUserHot leaves a user without one)
					err = errs.E(op, errs.NotFound, "user not found")
				}
			}
		case errors.As(err, &hot): // turned hot since this store last knew
			s.hotUsers.learn(followedID, hot.shards)
			err = s.followHot(ctx, op, item, hot.shards, &existing)
		}
	}
	if errors.Is(err, errExists) {
		var old Follow
		return old, unmarshal(op, existing, &old)
	}
	if err != nil {
		return Follow{}, err
	}
	return f, nil
}

// Unfollow removes the follow and decrements both users' counts, in one
// transaction, and returns the removed follow; (nil, nil) when there was no
// follow to remove, which makes it idempotent. It removes the follow it
// read, conditioned on its version and its GSI2 partition: a follow made
// again meanwhile (by another unfollow and follow, perhaps into a shard of a
// user turned hot) is another follow, which it leaves, as if it had run
// before it.
func (s *Store) Unfollow(ctx context.Context, followerID, followedID string) (*Follow, error) {
	const op = "store.Unfollow"
	if err := checkIDs(op, followerID, followedID); err != nil {
		return nil, err
	}
	var item followItem
	found, err := s.getConsistent(ctx, op, itemKey{UserPK(followerID), FollowsSK(followedID)}, &item)
	if err != nil || !found {
		return nil, err
	}
	f := item.Follow
	remove := onlyIf(s.remove(UserPK(followerID), FollowsSK(followedID), func(map[string]types.AttributeValue) error { return errExists }),
		AttrGSI2PK, item.GSI2PK)
	remove.cond = asRead(remove.cond, "v", item.Version)
	if n := followerShard(followedID, item.GSI2PK); n >= 0 { // a hot user's: counted on the shard's counter
		followerPK := UserPK(followerID)
		err = s.counting(ctx, op, func() error {
			return s.transact(ctx, op, remove,
				s.addCount(followerPK, SKCount, "followingCount", countDown, onCounter(followerPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)),
				s.shardCount(UserShardPK(followedID, n), "followerCount", countDown, errs.E(op, errs.NotFound, "user not found")))
		})
	} else {
		err = s.counting(ctx, op, func() error {
			return s.transact(ctx, op, append([]txAction{remove}, s.followCounts(op, followerID, followedID, countDown)...)...)
		})
	}
	if errors.Is(err, errExists) { // removed by a concurrent unfollow, perhaps followed again since
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return &f, nil
}

// followCounts are the actions adding delta to the follower's followingCount
// and the followed user's followerCount, on their counter items.
func (s *Store) followCounts(op, followerID, followedID string, delta int) []txAction {
	followerPK, followedPK := UserPK(followerID), UserPK(followedID)
	return []txAction{
		s.addCount(followerPK, SKCount, "followingCount", delta, onCounter(followerPK, errs.E(op, errs.NotFound, "no profile: call createUser first"), nil)),
		s.addCount(followedPK, SKCount, "followerCount", delta, onCounter(followedPK, errs.E(op, errs.NotFound, "user not found"), nil)),
	}
}

// getConsistent reads one item with a strongly consistent GetItem into v and
// reports whether it exists.
func (s *Store) getConsistent(ctx context.Context, op string, key itemKey, v any) (bool, error) {
	out, err := s.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), Key: key.attributes(), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return false, fail(op, err)
	}
	if out.Item == nil {
		return false, nil
	}
	return true, unmarshal(op, out.Item, v)
}
