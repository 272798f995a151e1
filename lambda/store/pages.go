package store

import (
	"slices"
	"strings"
	"time"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// A page of a connection: what a caller asks (PageRequest: a limit, a token,
// an order, a time range, the attributes to read) and what it gets (Page:
// the items, a token for the next page, cut to a byte budget when asked).

// Page limits of every connection.
const (
	DefaultLimit = 20
	MaxLimit     = 100
)

// PageRequest asks for one page of a connection.
type PageRequest struct {
	Limit     int    // 1..MaxLimit
	NextToken string // "" for the first page
	// Attributes, when not nil, limits what is read of each item to these
	// attributes (and the keys, which are always read): a ProjectionExpression
	// that saves bytes when large attributes, such as a post's body, are not
	// needed. Names that are not attributes are ignored.
	Attributes []string
	// MaxBytes, when positive, ends the page early (with a NextToken) once its
	// items, encoded as the Lambda sends them, would take more bytes. A page
	// always holds at least one item when one remains.
	MaxBytes int
	// Order is the order of the items, defaultOrder for the connection's own.
	Order Order
	// After and Before, when not zero, are exclusive bounds on the items'
	// creation time (a post's publication time): only the items strictly
	// between them, found by the key condition (the sort keys are ULIDs of
	// that time), never by a filter.
	After, Before time.Time
}

// Order is the order of a connection's items.
type Order int

const (
	defaultOrder Order = iota // the connection's own
	OldestFirst
	NewestFirst
)

// String is the schema's SortOrder value.
func (o Order) String() string {
	switch o {
	case OldestFirst:
		return "OLDEST_FIRST"
	case NewestFirst:
		return "NEWEST_FIRST"
	}
	return ""
}

// args writes the arguments that shape a query canonically, for its tokens'
// scope: "" for the defaults, so that tokens issued before there were
// arguments stay valid.
func (r PageRequest) args(extra string) string {
	var parts []string
	if r.Order != defaultOrder {
		parts = append(parts, "order="+r.Order.String())
	}
	if !r.After.IsZero() {
		parts = append(parts, "after="+r.After.UTC().Format(time.RFC3339Nano))
	}
	if !r.Before.IsZero() {
		parts = append(parts, "before="+r.Before.UTC().Format(time.RFC3339Nano))
	}
	if extra != "" {
		parts = append(parts, extra)
	}
	return strings.Join(parts, "&")
}

// Page is one page of a connection, shaped as the schema's *Connection types.
// NextToken is nil on the last page, and only there: a page may hold fewer
// items than its limit and still have a NextToken (DynamoDB's 1 MB read limit,
// a byte budget), but never ends while items remain.
type Page[T any] struct {
	Items     []T     `json:"items"`
	NextToken *string `json:"nextToken"`

	// after returns the token that resumes the connection after Items[i].
	after func(i int) (string, error)
}

// Cut returns the page ended after its first n items, with the token that
// resumes right after them; the page itself when n is not less than its
// length.
func (p Page[T]) Cut(n int) (Page[T], error) {
	if n >= len(p.Items) || n < 1 {
		return p, nil
	}
	token, err := p.after(n - 1)
	if err != nil {
		return Page[T]{}, err
	}
	p.Items = p.Items[:n]
	p.NextToken = &token
	return p, nil
}

// NewPage is a page of items: next is its token (nil on the last page),
// and after(i) the token that resumes after items[i], with which Cut and
// Fit end it early.
func NewPage[T any](items []T, next *string, after func(i int) (string, error)) Page[T] {
	return Page[T]{Items: items, NextToken: next, after: after}
}

// Fit returns the page cut to its first items that take at most maxBytes
// encoded as the Lambda sends them, and at least one (the page itself when
// maxBytes is not positive or they all fit).
func (p Page[T]) Fit(maxBytes int) (Page[T], error) {
	if maxBytes <= 0 {
		return p, nil
	}
	return p.Cut(max(fitBytes(p.Items, maxBytes), 1))
}

// fitBytes returns how many of the first items (perhaps none) take at most
// budget bytes encoded as the Lambda sends them, a comma each.
func fitBytes[T any](items []T, budget int) int {
	size := 0
	for n, item := range items {
		if size += payload.Size(item) + 1; size > budget {
			return n
		}
	}
	return len(items)
}

// Only is p with its items as if only attrs (nil: everything) had been
// read of them: what they encode (a page read whole, kept, and given to a
// request that selects less). p's items are not changed.
func (p Page[T]) Only(attrs []string) Page[T] {
	p.Items = slices.Clone(p.Items)
	for i := range p.Items {
		readOnly(&p.Items[i], attrs)
	}
	return p
}
