package resolver

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"unicode"
	"unicode/utf8"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Mutations act for the signed-in user only. Their inputs are validated here,
// before anything is written; the store enforces ownership in the writes.

// mutation makes a resolver for a mutation: it requires a signed-in user
// (checked before the arguments, so anonymous callers learn nothing about
// validation) and passes the user's ID along with the validated arguments.
func mutation[A any](fn func(ctx context.Context, ev *appsync.Event, callerID string, args A) (any, error)) Field {
	return concurrently(func(ctx context.Context, ev *appsync.Event) (any, error) {
		id, err := caller(ev)
		if err != nil {
			return nil, err
		}
		return withArgs(func(ctx context.Context, ev *appsync.Event, args A) (any, error) {
			return fn(ctx, ev, id, args)
		})(ctx, ev)
	})
}

// Limits of text inputs, in characters.
const (
	maxName         = 100
	maxBio          = 1000
	maxTitle        = 200
	maxPostBody     = 20000
	maxCommentBody  = 2000
	maxEmailAddress = 254
)

// largestInputs is the largest value each text field an input sets may
// take, by type and field: TestLargestObjectsFitTheirBudgets checks every
// byte budget with the largest objects built from it.
var largestInputs = map[string]inputLimit{
	"User.name":    {chars: maxName},
	"User.bio":     {chars: maxBio},
	"Post.title":   {chars: maxTitle},
	"Post.body":    {chars: maxPostBody},
	"Comment.body": {chars: maxCommentBody},
}

// inputLimit is an input's largest value: text of at most chars
// characters, or, with items, a list of at most items such texts.
type inputLimit struct{ chars, items int }

// checkText returns a ValidationError unless s has 1..max characters and is
// not blank: it must keep something once white space, control characters and
// invisible format characters (such as U+200B, zero width space) are removed.
func checkText(field string, s string, max int) error {
	if blank(s) {
		return errs.E("resolver.input", errs.Validation, field+" must not be empty")
	}
	if n := utf8.RuneCountInString(s); n > max || !utf8.ValidString(s) {
		return errs.E("resolver.input", errs.Validation, fmt.Sprintf("%s must be at most %d characters", field, max))
	}
	return nil
}

// blank reports whether s has nothing visible: only Unicode white space,
// control and format (Cf) characters, or nothing at all.
func blank(s string) bool {
	for _, r := range s {
		if !unicode.IsSpace(r) && !unicode.IsControl(r) && !unicode.Is(unicode.Cf, r) {
			return false
		}
	}
	return true
}

// checkOptional is checkText for a field that may be absent.
func checkOptional(field string, s *string, max int) error {
	if s == nil {
		return nil
	}
	return checkText(field, *s, max)
}

func checkEmail(email string) error {
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Address != email || addr.Name != "" || len(email) > maxEmailAddress {
		return errs.E("resolver.input", errs.Validation, "email is not a valid address")
	}
	return nil
}

type createUserArgs struct {
	Input struct {
		Handle string  `json:"handle"`
		Name   string  `json:"name"`
		Email  string  `json:"email"`
		Bio    *string `json:"bio"`
	} `json:"input"`
}

func (a *createUserArgs) validate() error {
	in := &a.Input
	if !store.ValidHandle(in.Handle) {
		return errs.E("Mutation.createUser", errs.Validation, "invalid handle: "+store.HandleRule)
	}
	if err := checkText("name", in.Name, maxName); err != nil {
		return err
	}
	if err := checkEmail(in.Email); err != nil {
		return err
	}
	if in.Bio != nil && utf8.RuneCountInString(*in.Bio) > maxBio {
		return errs.E("Mutation.createUser", errs.Validation, fmt.Sprintf("bio must be at most %d characters", maxBio))
	}
	return nil
}

// createUser resolves Mutation.createUser: the caller's profile, with the
// caller's ID. One transaction (profile + handle guard).
func (h *Handler) createUser(ctx context.Context, _ *appsync.Event, callerID string, args createUserArgs) (any, error) {
	in := args.Input
	email := in.Email
	bio := in.Bio
	if bio != nil && *bio == "" {
		bio = nil
	}
	return h.store.CreateUser(ctx, store.User{ID: callerID, Handle: in.Handle, Name: in.Name, Email: &email, Bio: bio})
}

type updateUserArgs struct {
	Input struct {
		Name *string `json:"name"`
		Bio  *string `json:"bio"`
	} `json:"input"`
}

func (a *updateUserArgs) validate() error {
	in := &a.Input
	if in.Name == nil && in.Bio == nil {
		return errs.E("Mutation.updateUser", errs.Validation, "give name or bio")
	}
	if err := checkOptional("name", in.Name, maxName); err != nil {
		return err
	}
	if in.Bio != nil && utf8.RuneCountInString(*in.Bio) > maxBio {
		return errs.E("Mutation.updateUser", errs.Validation, fmt.Sprintf("bio must be at most %d characters", maxBio))
	}
	return nil
}

// updateUser resolves Mutation.updateUser: one conditional UpdateItem of the
// caller's own profile.
func (h *Handler) updateUser(ctx context.Context, _ *appsync.Event, callerID string, args updateUserArgs) (any, error) {
	return h.store.UpdateUser(ctx, callerID, args.Input.Name, args.Input.Bio)
}

type createPostArgs struct {
	Input struct {
		Title  string  `json:"title"`
		Body   string  `json:"body"`
		Status *string `json:"status"`
	} `json:"input"`
}

func (a *createPostArgs) validate() error {
	if s := a.Input.Status; s != nil && *s != store.StatusDraft && *s != store.StatusPublished {
		return errs.E("Mutation.createPost", errs.Validation, "status must be DRAFT or PUBLISHED")
	}
	if err := checkText("title", a.Input.Title, maxTitle); err != nil {
		return err
	}
	return checkText("body", a.Input.Body, maxPostBody)
}

// createPost resolves Mutation.createPost: one transaction (post + the
// author's postCount, which a draft leaves until it is published).
func (h *Handler) createPost(ctx context.Context, _ *appsync.Event, callerID string, args createPostArgs) (any, error) {
	draft := args.Input.Status != nil && *args.Input.Status == store.StatusDraft
	return h.store.CreatePost(ctx, callerID, store.NewPost{Title: args.Input.Title, Body: args.Input.Body, Draft: draft})
}

// publishPost resolves Mutation.publishPost: one transaction (the draft
// becomes published, at the end of its author's posts, and is counted).
func (h *Handler) publishPost(ctx context.Context, _ *appsync.Event, callerID string, args postArgs) (any, error) {
	return h.store.PublishPost(ctx, callerID, args.ID)
}

type updatePostArgs struct {
	Input struct {
		ID             string `json:"id"`
		store.PostEdit        // decoded by its fields' names, the schema's
	} `json:"input"`
}

func (a *updatePostArgs) validate() error {
	in := &a.Input
	if in.PostEdit == (store.PostEdit{}) {
		return errs.E("Mutation.updatePost", errs.Validation, "give title or body")
	}
	if err := checkOptional("title", in.Title, maxTitle); err != nil {
		return err
	}
	return checkOptional("body", in.Body, maxPostBody)
}

// updatePost resolves Mutation.updatePost: one UpdateItem conditioned on the
// caller being the author.
func (h *Handler) updatePost(ctx context.Context, _ *appsync.Event, callerID string, args updatePostArgs) (any, error) {
	return h.store.UpdatePost(ctx, callerID, args.Input.ID, args.Input.PostEdit)
}

// deletePost resolves Mutation.deletePost: the post and its comments. A
// deletion that committed is answered as done, whatever its sweep of the
// comments did (store.ErrSweepUnfinished: logged; a later deletePost of the
// same ID sweeps the rest).
func (h *Handler) deletePost(ctx context.Context, _ *appsync.Event, callerID string, args postArgs) (any, error) {
	p, err := h.store.DeletePost(ctx, callerID, args.ID)
	if errors.Is(err, store.ErrSweepUnfinished) {
		h.log.Warn("post deleted, its sweep unfinished", "field", "Mutation.deletePost", "post", args.ID, "cause", err.Error())
		return p, nil
	}
	return p, err
}

type createCommentArgs struct {
	Input struct {
		PostID string `json:"postId"`
		Body   string `json:"body"`
	} `json:"input"`
}

func (a *createCommentArgs) validate() error { return checkText("body", a.Input.Body, maxCommentBody) }

// createComment resolves Mutation.createComment: one transaction (comment +
// the post's commentCount, conditioned on the post existing).
func (h *Handler) createComment(ctx context.Context, _ *appsync.Event, callerID string, args createCommentArgs) (any, error) {
	return h.store.CreateComment(ctx, callerID, args.Input.PostID, args.Input.Body)
}

type deleteCommentArgs struct {
	PostID string `json:"postId"`
	ID     string `json:"id"`
}

// deleteComment resolves Mutation.deleteComment: one transaction, allowed
// for the comment's author and the post's author.
func (h *Handler) deleteComment(ctx context.Context, _ *appsync.Event, callerID string, args deleteCommentArgs) (any, error) {
	return h.store.DeleteComment(ctx, callerID, args.PostID, args.ID)
}

type followArgs struct {
	UserID string `json:"userId"`
}

// follow resolves Mutation.follow: idempotent, one transaction.
func (h *Handler) follow(ctx context.Context, _ *appsync.Event, callerID string, args followArgs) (any, error) {
	return h.store.Follow(ctx, callerID, args.UserID)
}

// unfollow resolves Mutation.unfollow: idempotent; null when there was no follow.
func (h *Handler) unfollow(ctx context.Context, _ *appsync.Event, callerID string, args followArgs) (any, error) {
	f, err := h.store.Unfollow(ctx, callerID, args.UserID)
	if err != nil || f == nil {
		return nil, err
	}
	return f, nil
}

type likeArgs struct {
	PostID string `json:"postId"`
}

// likePost resolves Mutation.likePost: idempotent, one transaction (the like,
// its guard, the post's likeCount; NotFound for a draft or an absent post),
// then the post as its selection needs it: its counter item alone when
// nothing else of the post is selected.
func (h *Handler) likePost(ctx context.Context, ev *appsync.Event, callerID string, args likeArgs) (any, error) {
	return h.store.LikePost(ctx, callerID, args.PostID, h.selectedAttributes(ev, ""))
}

// unlikePost resolves Mutation.unlikePost: idempotent, as likePost.
func (h *Handler) unlikePost(ctx context.Context, ev *appsync.Event, callerID string, args likeArgs) (any, error) {
	return h.store.UnlikePost(ctx, callerID, args.PostID, h.selectedAttributes(ev, ""))
}
