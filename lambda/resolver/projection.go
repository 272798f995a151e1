package resolver

// Projection: what a selection reads of its objects, so that a Query or a
// BatchGetItem asks for those attributes only (capacity is the same, the
// bytes moved are not).

import (
	"bytes"
	"context"
	"maps"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/store"
)

// selectionOf reads ev's selection as the handler's reading has it
// (WithSelectionReading).
func (h *Handler) selectionOf(ev *appsync.Event) (appsync.Selection, error) {
	return appsync.ParseSelection(ev.Info.SelectionSetGraphQL, ev.Info.FieldName, ev.Info.Variables, h.readingNow())
}

// itemAttributes returns the attributes a connection's selection reads of
// its items, plus required (what child resolvers need on their source), or
// nil (read everything) when the selection cannot be read in full.
func (h *Handler) itemAttributes(ev *appsync.Event, required ...string) []string {
	return h.selectedAttributes(ev, "items", required...)
}

// selectedAttributes returns the names selected under the field named under
// ("" for its own selection), plus required, or nil when the selection is
// not known in full (a named fragment spread, or first-occurrence).
func (h *Handler) selectedAttributes(ev *appsync.Event, under string, required ...string) []string {
	set, err := h.selectionOf(ev)
	if err != nil || !set.Exact() || ev.Info.SelectionSetGraphQL == "" {
		return nil
	}
	attrs := append([]string(nil), required...)
	levels := []appsync.Selection{set}
	if under != "" {
		levels = nil
		for _, f := range set.Named(under) {
			levels = append(levels, f.Selection)
		}
	}
	for _, level := range levels {
		if !level.Exact() {
			return nil
		}
		for _, f := range level.Fields {
			attrs = append(attrs, f.Name)
		}
	}
	return attrs
}

// needsUserItems reports whether a UserConnection's selection reads more of
// its users than their IDs. It reads field names from selectionSetGraphQL
// (selectionSetList shows aliases in their place: "id: handle" is not the
// ID); when the selection cannot be read in full, it answers true.
func (h *Handler) needsUserItems(ev *appsync.Event) bool {
	attrs := h.selectedAttributes(ev, "items")
	if attrs == nil {
		return true
	}
	for _, f := range attrs {
		if f != "id" && f != "__typename" {
			return true
		}
	}
	return false
}

// selectsUserCount reports whether ev's selection (under the field under,
// "" for its own) may select a user's count, which costs the counter items:
// always under first-occurrence.
func (h *Handler) selectsUserCount(ev *appsync.Event, under string) bool {
	if text := ev.Info.SelectionSetGraphQL; h.readingNow() == appsync.EveryOccurrence && text != "" &&
		!strings.Contains(text, "Count") && !strings.Contains(text, "...") {
		return false
	}
	return store.SelectsCount(h.selectedAttributes(ev, under), store.UserCounts)
}

// users is store.Users for a batch of events selecting users: their counts
// are read when one of the events may select one.
func (h *Handler) users(ctx context.Context, evs []*appsync.Event, ids []string) (map[string]store.User, error) {
	counts := false
	for _, ev := range distinctSelections(evs) {
		if counts = h.selectsUserCount(ev, ""); counts {
			break
		}
	}
	return h.store.Users(ctx, ids, counts)
}

// distinctSelections returns one event of evs per distinct selection (text
// and variables): the events of a batch mostly share one, and each is parsed
// once.
func distinctSelections(evs []*appsync.Event) []*appsync.Event {
	var g selections
	for _, ev := range evs {
		g.of(ev)
	}
	return g.distinct
}

// selections groups a batch's events by what their selections ask (text
// and the variables its arguments may name), without a key made per event:
// of reads each event's text as it is, and compares variables only among
// events of one text.
type selections struct {
	distinct []*appsync.Event // one event of each group, by group
	byText   map[string][]int // the groups of each text
}

// of returns the group of ev's selection, made when it is new.
func (g *selections) of(ev *appsync.Event) int {
	text := ev.Info.SelectionSetGraphQL
	for _, i := range g.byText[text] {
		if bytes.Equal(g.distinct[i].Info.Variables, ev.Info.Variables) {
			return i
		}
	}
	if g.byText == nil {
		g.byText = map[string][]int{}
	}
	i := len(g.distinct)
	g.distinct = append(g.distinct, ev)
	g.byText[text] = append(g.byText[text], i)
	return i
}

// pageKeeper is a store that keeps hot posts' pages (lambda/hotpage),
// their comments' authors with them.
type pageKeeper interface {
	KeepsPage(postID string) bool // "": whether it may keep any
	PageAuthors(ctx context.Context, postID string, ids []string, counts bool) (map[string]store.User, error)
}

// commentAuthors is users for the authors of a batch of comments: those of
// a hot post's comments through what the store keeps of its page, when it
// is a pageKeeper, the others in one BatchGetItem as ever. Where the store
// keeps no page (nearly always), it is users.
func (h *Handler) commentAuthors(ctx context.Context, evs []*appsync.Event, ids []string) (map[string]store.User, error) {
	keeper, ok := h.store.(pageKeeper)
	if !ok || !keeper.KeepsPage("") {
		return h.users(ctx, evs, ids)
	}
	byPost := map[string][]string{}
	var cold []*appsync.Event
	var coldIDs []string
	for _, ev := range evs {
		src, err := decodeSource[commentSource](ev)
		switch {
		case err != nil || !store.ValidID(src.AuthorID): // batchedLookup reports it
		case keeper.KeepsPage(src.PostID):
			byPost[src.PostID] = append(byPost[src.PostID], src.AuthorID)
		default:
			cold, coldIDs = append(cold, ev), append(coldIDs, src.AuthorID)
		}
	}
	out := map[string]store.User{}
	if len(coldIDs) > 0 {
		users, err := h.users(ctx, cold, coldIDs)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, users)
	}
	counts := false
	for _, ev := range distinctSelections(evs) {
		counts = counts || h.selectsUserCount(ev, "")
	}
	for post, authors := range byPost {
		users, err := keeper.PageAuthors(ctx, post, authors, counts)
		if err != nil {
			return nil, err
		}
		maps.Copy(out, users)
	}
	return out, nil
}

// visible returns u as the caller may see it: the email only to its owner.
func visible(ev *appsync.Event, u store.User) store.User {
	if ev.Identity.UserID() != u.ID {
		u.Email = nil
	}
	return u
}

func showUser(ev *appsync.Event, u store.User) any { return visible(ev, u) }
