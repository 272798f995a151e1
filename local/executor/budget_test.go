package executor_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/lambda/budget"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/storetest"
)

// aliased is a mutation of n aliased createComment on post.
func aliased(n int, post string) string {
	var b strings.Builder
	b.WriteString("mutation {")
	for i := range n {
		fmt.Fprintf(&b, ` c%d: createComment(input: {postId: "%s", body: "one of many"}) { id }`, i, post)
	}
	b.WriteString(" }")
	return b.String()
}

// A caller's write budget: one request of aliased mutations past it writes
// the budget's worth and refuses the rest, Throttled, with nothing written
// for them; another caller still writes. And what it saves: the same
// request of 200 comments costs the budget's writes and a write unit a
// refusal, against 200 comments' without it (the figures are logged).
func TestACallersWriteBudget(t *testing.T) {
	d := sample.Data()
	const perMinute = 50
	budgeted, _, s := setupStore(t, d, resolver.CoreRoutes, nil, nil, func(s *store.Store) resolver.Option {
		return resolver.WithFeature(budget.New(s, perMinute).Feature())
	})
	unbudgeted, _, _ := setupStore(t, d, resolver.CoreRoutes, nil, nil)
	count := func(s *store.Store) int {
		return storetest.Count(t, storetest.Client(t), s.Table(), "", "pk", store.PostPK(sample.HelloPost), "sk", store.CommentPrefix)
	}
	before := count(s)
	// createComment is non-null: the first refused field nulls the whole
	// data and ends the mutation (no later field runs, as GraphQL executes
	// a mutation); what was written is counted in the table.
	start := time.Now().UTC().Truncate(time.Minute)
	_, resp := run(t, budgeted, executor.Request{Identity: signedIn(sample.Alice), Query: aliased(200, sample.HelloPost)})
	minutes := int(time.Now().UTC().Truncate(time.Minute).Sub(start)/time.Minute) + 1
	written, refused := count(s)-before, 0
	for _, e := range resp.Errors {
		if e.ErrorType == "Throttled" && strings.Contains(e.Message, fmt.Sprintf("more than %d writes a minute", perMinute)) {
			refused++
		}
	}
	// The budget counts calendar minutes: a request that spans two may
	// write up to the budget in each.
	ran := resp.Extensions["cost"].(executor.Cost).LambdaInvocations
	if refused != 1 || ran != written+1 || written < perMinute || written > minutes*perMinute || minutes == 1 && written != perMinute {
		t.Errorf("%d comments written, %d refused, %d invocations over %d calendar minutes; want %d a minute, then one refused and nothing after it", written, refused, ran, minutes, perMinute)
	}
	if _, other := run(t, budgeted, executor.Request{Identity: signedIn(sample.Bob), Query: aliased(1, sample.HelloPost)}); len(other.Errors) > 0 {
		t.Errorf("another caller's comment: %v", other.Errors)
	}
	_, plain := run(t, unbudgeted, executor.Request{Identity: signedIn(sample.Alice), Query: aliased(200, sample.HelloPost)})
	with, without := resp.Extensions["cost"].(executor.Cost), plain.Extensions["cost"].(executor.Cost)
	if len(plain.Errors) > 0 || with.WriteCapacityUnits >= without.WriteCapacityUnits {
		t.Errorf("with the budget %v write units, without %v (errors %v)", with.WriteCapacityUnits, without.WriteCapacityUnits, plain.Errors)
	}
	t.Logf("200 aliased createComment, budget %d: %d invocations, %v write units (DynamoDB Local's), %v requests; without a budget: %d invocations, %v write units, %v requests",
		perMinute, with.LambdaInvocations, with.WriteCapacityUnits, with.DynamoDB, without.LambdaInvocations, without.WriteCapacityUnits, without.DynamoDB)
}
