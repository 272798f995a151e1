package resolver

// UserConnections made of follows (User.following, User.followers): the
// pages of a batch, then the users on their other side read for the whole
// batch at once.

import (
	"context"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

// userRef is a user of whom only the ID was selected.
type userRef struct {
	ID string `json:"id"`
}

// userConnection resolves a UserConnection of follows: User.following (AP7,
// one Query, or none when prefetched) and User.followers (AP8, GSI2). Pages
// are read concurrently, then the users every page needs, one BatchGetItem
// per 100 for the whole batch.
func (h *Handler) userConnection(
	fetch func(context.Context, string, store.PageRequest) (store.Page[store.Follow], error),
	prefetched func(userSource, store.PageRequest) (store.Page[store.Follow], bool),
	other func(store.Follow) string,
) Field {
	pages := Each(func(ctx context.Context, ev *appsync.Event, args pageArgs) (any, error) {
		src, err := decodeSource[userSource](ev)
		if err != nil {
			return nil, err
		}
		if prefetched != nil {
			if page, ok := prefetched(src, args.request(ctx)); ok {
				return page, nil
			}
		}
		return fetch(ctx, src.ID, args.request(ctx))
	})
	return func(ctx context.Context, evs []*appsync.Event) []Result {
		out := pages(ctx, evs)
		var ids []string
		var groups selections // the events of a batch mostly share one
		group := make([]int, len(evs))
		for i, ev := range evs {
			group[i] = groups.of(ev)
		}
		needs := make([]bool, len(groups.distinct))
		counts := false
		for i, ev := range groups.distinct {
			needs[i] = h.needsUserItems(ev)
			counts = counts || h.selectsUserCount(ev, "items")
		}
		need := make([]bool, len(evs))
		for i, r := range out {
			if need[i] = needs[group[i]]; r.Err == nil && need[i] {
				for _, f := range r.Data.(store.Page[store.Follow]).Items {
					ids = append(ids, other(f))
				}
			}
		}
		var users map[string]store.User
		var err error
		if len(ids) > 0 {
			users, err = h.store.Users(ctx, ids, counts)
		}
		for i, r := range out {
			if r.Err != nil {
				continue
			}
			if !need[i] {
				out[i] = Result{Data: userRefs(r.Data.(store.Page[store.Follow]), other)}
				continue
			}
			if err != nil {
				out[i] = Result{Err: err}
				continue
			}
			show := func(u store.User) (any, bool) { return visible(evs[i], u), true }
			conn, cerr := joined(ctx, r.Data.(store.Page[store.Follow]), users, other, show)
			out[i] = Result{Data: conn, Err: cerr}
		}
		return out
	}
}

// userRefs is a page of follows as the users on their other side, of whom only
// the IDs are selected.
func userRefs(page store.Page[store.Follow], other func(store.Follow) string) store.Page[any] {
	conn := store.Page[any]{Items: make([]any, len(page.Items)), NextToken: page.NextToken}
	for i, f := range page.Items {
		conn.Items[i] = userRef{ID: other(f)}
	}
	return conn
}

// joined is a page of links as the items found under their keys, shown as
// show returns them (left out where show says so or none is found), cut
// again with a nextToken where the items would pass the field's share.
func joined[L, V any](ctx context.Context, page store.Page[L], found map[string]V, key func(L) string, show func(V) (any, bool)) (store.Page[any], error) {
	budget := pageArgs{}.request(ctx).MaxBytes
	conn := store.Page[any]{Items: make([]any, 0, len(page.Items)), NextToken: page.NextToken}
	size := 0
	for i, l := range page.Items {
		v, ok := found[key(l)]
		if !ok {
			continue
		}
		item, ok := show(v)
		if !ok {
			continue
		}
		s := payload.Size(item) + 1
		if len(conn.Items) > 0 && size+s > budget {
			cut, err := page.Cut(i)
			if err != nil {
				return store.Page[any]{}, err
			}
			conn.NextToken = cut.NextToken
			break
		}
		size += s
		conn.Items = append(conn.Items, item)
	}
	return conn, nil
}
