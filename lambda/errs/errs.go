// Package errs defines the resolver's errors: a Kind, the operation that
// failed and a message safe to show a client. They are converted to
// AppSync's errorType and errorMessage once, at the Lambda boundary
// (package resolver); the wrapped cause is for logs only.
package errs

import (
	"errors"
	"fmt"
)

// Kind classifies an error. Its String is the GraphQL errorType.
type Kind uint8

const (
	// Internal is any failure the client cannot fix; its cause is logged, not shown.
	Internal Kind = iota
	// Validation is bad input: a malformed argument, an out-of-range limit.
	Validation
	// Unauthorized is a caller without the right to do what it asked.
	Unauthorized
	// NotFound is an item that does not exist where one was required.
	NotFound
	// Conflict is a write that lost against the current state (a taken handle).
	Conflict
	// InvalidNextToken is a pagination token that is forged, corrupt or from another query.
	InvalidNextToken
	// Throttled is work not done in time, which the client may ask for
	// again: DynamoDB refusing it for lack of capacity, DynamoDB not answering
	// before the invocation's deadline, or a sweep (deletePost's comments)
	// stopped before it to be finished by a later call.
	Throttled
)

var kindNames = [...]string{
	Internal:         "InternalError",
	Validation:       "ValidationError",
	Unauthorized:     "Unauthorized",
	NotFound:         "NotFound",
	Conflict:         "Conflict",
	InvalidNextToken: "InvalidNextToken",
	Throttled:        "Throttled",
}

// String returns the errorType AppSync shows for k.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return kindNames[Internal]
}

// Error is an error with a kind. Message is shown to clients (except for
// Internal errors, whose message is replaced); Err is the cause, for logs.
type Error struct {
	Kind    Kind
	Op      string // the operation that failed, such as "store.Post"
	Message string // safe to show to a client
	Err     error  // the underlying cause, if any
}

// E returns an error of the given kind with a client-safe message.
func E(op string, kind Kind, message string) error {
	return &Error{Kind: kind, Op: op, Message: message}
}

// Wrap returns an error of the given kind that keeps cause for the logs.
// A nil cause gives a nil error.
func Wrap(op string, kind Kind, message string, cause error) error {
	if cause == nil {
		return nil
	}
	return &Error{Kind: kind, Op: op, Message: message, Err: cause}
}

// Internalf returns an Internal error whose formatted text is only logged.
func Internalf(op, format string, args ...any) error {
	return &Error{Kind: Internal, Op: op, Message: "internal error", Err: fmt.Errorf(format, args...)}
}

func (e *Error) Error() string {
	s := e.Message
	if e.Op != "" {
		s = e.Op + ": " + s
	}
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the kind of the outermost *Error in err's chain, and
// Internal for any other error.
func KindOf(err error) Kind {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	return Internal
}

// Is reports whether err is an *Error of kind k.
func Is(err error, k Kind) bool { return err != nil && KindOf(err) == k }

// PublicMessage returns the message a client may see for err: the Error's
// message, except for Internal errors, which all read "internal error".
func PublicMessage(err error) string {
	var e *Error
	if errors.As(err, &e) && e.Kind != Internal && e.Message != "" {
		return e.Message
	}
	return "internal error"
}
