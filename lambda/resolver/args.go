package resolver

// Arguments more than one kind of field takes: a connection's page
// (limit, nextToken, order, a time range) and a post's ID.

import (
	"context"
	"fmt"
	"time"

	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// pageEnvelope is what a page adds to its items: {"items":[],"nextToken":"..."}.
const pageEnvelope = 512

// pageArgs are a connection field's arguments.
type pageArgs struct {
	Limit     *int    `json:"limit"`
	NextToken *string `json:"nextToken"`
	Order     *string `json:"order"`  // SortOrder; nil for the field's default
	After     *string `json:"after"`  // AWSDateTime, exclusive
	Before    *string `json:"before"` // AWSDateTime, exclusive

	attributes    []string // what to read of each item; nil for everything
	order         store.Order
	after, before time.Time
}

func (a *pageArgs) validate() error {
	const op = "resolver.page"
	if a.Limit != nil && (*a.Limit < 1 || *a.Limit > store.MaxLimit) {
		return errs.E(op, errs.Validation, fmt.Sprintf("limit must be between 1 and %d", store.MaxLimit))
	}
	if a.Order != nil {
		switch *a.Order {
		case "OLDEST_FIRST":
			a.order = store.OldestFirst
		case "NEWEST_FIRST":
			a.order = store.NewestFirst
		default:
			return errs.E(op, errs.Validation, "order must be NEWEST_FIRST or OLDEST_FIRST")
		}
	}
	var err error
	if a.after, err = dateTime("after", a.After); err != nil {
		return err
	}
	if a.before, err = dateTime("before", a.Before); err != nil {
		return err
	}
	if !a.after.IsZero() && !a.before.IsZero() && !a.after.Before(a.before) {
		return errs.E(op, errs.Validation, "after must be earlier than before")
	}
	return nil
}

// dateTime parses an AWSDateTime argument; nil is the zero time.
func dateTime(name string, v *string) (time.Time, error) {
	if v == nil {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, *v)
	if err != nil || t.Before(store.MinTime) || t.After(store.MaxTime) {
		return time.Time{}, errs.E("resolver.page", errs.Validation,
			fmt.Sprintf("%s must be an AWSDateTime (such as 2024-05-01T12:00:00.000Z) after 1970", name))
	}
	return t, nil
}

// request returns the page the arguments ask for, for the field of ev: at
// most the field's share of a batch's reply (Route.ReplyBudget).
func (a pageArgs) request(ctx context.Context) store.PageRequest {
	r := store.PageRequest{Limit: store.DefaultLimit, MaxBytes: payload.MaxBytes}
	if route, ok := routeOf(ctx); ok {
		r.MaxBytes = route.replyBudget() - pageEnvelope
	}
	if a.Limit != nil {
		r.Limit = *a.Limit
	}
	if a.NextToken != nil {
		r.NextToken = *a.NextToken
	}
	r.Attributes = a.attributes
	r.Order, r.After, r.Before = a.order, a.after, a.before
	return r
}

type postArgs struct {
	ID string `json:"id"`
}
