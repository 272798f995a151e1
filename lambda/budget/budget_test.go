package budget_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/budget"
	"github.com/example/appsync-dynamo/lambda/cost"
	"github.com/example/appsync-dynamo/lambda/errs"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/storetest"
)

// A caller's budget: perMinute writes counted at once (concurrently, as a
// batch's mutations are), the next refused Throttled with the budget in its
// message, each charge one UpdateItem of one write unit on the caller's own
// partition; another caller's apart; the next minute a new count; an
// invalid ID refused before DynamoDB.
func TestACallersBudgetIsCountedByTheMinute(t *testing.T) {
	now := time.Date(2026, 12, 5, 10, 30, 15, 0, time.UTC)
	var mu sync.Mutex
	s, client := storetest.NewStore(t, store.Dataset{}, store.WithClock(func() time.Time { mu.Lock(); defer mu.Unlock(); return now }))
	const perMinute = 25
	b := budget.New(s, perMinute)
	ctx, meter := cost.WithMeter(t.Context())
	var wg sync.WaitGroup
	failed := make([]error, perMinute)
	for i := range perMinute {
		wg.Go(func() { failed[i] = b.Charge(ctx, "u_alice") })
	}
	wg.Wait()
	for _, err := range failed {
		if err != nil {
			t.Fatal(err)
		}
	}
	err := b.Charge(ctx, "u_alice")
	if errs.KindOf(err) != errs.Throttled || errs.PublicMessage(err) != fmt.Sprintf("more than %d writes a minute by this caller; retry in a minute", perMinute) {
		t.Fatalf("the write past the budget: %v", err)
	}
	sum := meter.Summary()
	// (The refusal's write unit is not in its answer: an error carries no
	// ConsumedCapacity, so the meter counts the accepted ones.)
	if sum.Requests["UpdateItem"] != perMinute+1 || sum.Write != perMinute {
		t.Errorf("%d charges cost %v requests, %v write units; want one UpdateItem each, a unit each accepted", perMinute+1, sum.Requests, sum.Write)
	}
	if n := storetest.Count(t, client, s.Table(), "", "pk", store.UserPK("u_alice"), "sk", budget.SK(now.Truncate(time.Minute))); n != 1 {
		t.Errorf("%d count items in the caller's partition for the minute, want 1", n)
	}
	if err := b.Charge(ctx, "u_bob"); err != nil {
		t.Errorf("another caller: %v", err)
	}
	mu.Lock()
	now = now.Add(time.Minute)
	mu.Unlock()
	if err := b.Charge(ctx, "u_alice"); err != nil {
		t.Errorf("the next minute: %v", err)
	}
	if err := b.Charge(ctx, "USER#x"); errs.KindOf(err) != errs.Validation {
		t.Errorf("an ID that may not go into a key: %v", err)
	}
}

// Every mutation's events are charged before they are resolved: those past
// the budget fail Throttled and are not resolved, the others are, in
// order; an event with no user is not charged (its mutation refuses it);
// a budget of 0 charges nothing.
func TestTheFeatureChargesEveryMutationFirst(t *testing.T) {
	s, _ := storetest.NewStore(t, store.Dataset{})
	var resolved []string
	echo := func(_ context.Context, evs []*appsync.Event) []resolver.Result {
		out := make([]resolver.Result, len(evs))
		for i, ev := range evs {
			resolved = append(resolved, ev.Identity.UserID())
			out[i] = resolver.Result{Data: ev.Identity.UserID()}
		}
		return out
	}
	event := func(user string) *appsync.Event {
		if user == "" {
			return &appsync.Event{}
		}
		return &appsync.Event{Identity: &appsync.Identity{Sub: user, Username: user}}
	}
	charged := budget.New(s, 2).Feature().Mutations(echo)
	out := charged(t.Context(), []*appsync.Event{event("u_a"), event(""), event("u_a"), event("u_a"), event("u_b")})
	if want := []string{"u_a", "", "u_a", "u_b"}; !slices.Equal(resolved, want) {
		t.Errorf("resolved %q, want %q", resolved, want)
	}
	for i, r := range out {
		if throttled := errs.KindOf(r.Err) == errs.Throttled; throttled != (i == 3) {
			t.Errorf("event %d: %+v", i, r)
		}
	}
	if out[4].Data != "u_b" || out[2].Data != "u_a" {
		t.Errorf("results out of order: %+v", out)
	}
	resolved = nil
	none := budget.New(s, 0).Feature().Mutations(echo)
	for range 5 {
		none(t.Context(), []*appsync.Event{event("u_c")})
	}
	if len(resolved) != 5 {
		t.Errorf("a budget of 0 resolved %d of 5", len(resolved))
	}
}

func TestFromEnvironment(t *testing.T) {
	s, _ := storetest.NewStore(t, store.Dataset{})
	for v, ok := range map[string]bool{"": true, "0": true, "120": true, "-1": false, "many": false, "1.5": false} {
		_, err := budget.FromEnvironment(s, func(string) string { return v })
		if (err == nil) != ok {
			t.Errorf("%s=%q: %v", budget.Environment, v, err)
		}
	}
	if budget.Setting(0) != budget.WritesPerMinute || budget.Setting(-1) != 0 || budget.Setting(7) != 7 {
		t.Error("Setting: 0 is the deployed budget, a negative one none")
	}
}
