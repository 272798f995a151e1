package executor_test

import (
	"maps"
	"testing"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/executor"
	"github.com/example/appsync-dynamo/local/feedtest"
	"github.com/example/appsync-dynamo/local/sample"
)

// A plan's totals are its cost's, in each layout: the seed's query and a
// feed page, with direct resolvers on every field (an invocation a field a
// level, batched) and as deployed (early returns); every resolver is
// resolved by an early return or by one invocation whose batch counts it.
func TestAPlansTotalsAreItsCosts(t *testing.T) {
	d := sample.Blog(3, 4, 3)
	feedtest.FollowWithFeed(&d, sample.Carol, sample.Alice, 4102444800)
	deployed, _, _ := setupStore(t, d, resolver.CoreRoutes, nil, nil)
	direct, _, _ := setupStore(t, d, resolver.CoreRoutes, []executor.Option{executor.WithDirectResolvers()}, []resolver.Option{resolver.WithoutAnswers()})
	for name, e := range map[string]*executor.Executor{"deployed": deployed, "direct": direct} {
		for _, q := range []string{
			`{ user(id: "u_alice") { name posts { items { title comments { items { body author { name } } } } } } }`,
			`{ feed(limit: 5) { items { title author { name } } } }`,
		} {
			_, resp := run(t, e, executor.Request{Query: q, Identity: signedIn(sample.Carol), Plan: true})
			c, p := resp.Extensions["cost"].(executor.Cost), resp.Extensions["plan"].(executor.Plan)
			byOp, critical := map[string]int{}, 0
			for _, r := range p.Requests {
				byOp[r.Operation]++
				if r.Critical {
					critical++
				}
			}
			batched, early := map[int]int{}, 0
			for _, r := range p.Resolvers {
				if r.ResolvedBy == executor.EarlyReturn {
					early++
				} else {
					batched[*r.Invocation]++
				}
			}
			for i, inv := range p.Invocations {
				if batched[i] != inv.Batch {
					t.Errorf("%s: %s: invocation %d (%s) batches %d events, %d resolvers name it", name, q, i, inv.Field, inv.Batch, batched[i])
				}
			}
			if len(p.Invocations) != c.LambdaInvocations || early != c.EarlyReturns || critical != c.DynamoDBRoundTrips || !maps.Equal(byOp, c.DynamoDB) {
				t.Errorf("%s: %s: plan %d invocations, %d early returns, %d critical, %v; cost %+v", name, q, len(p.Invocations), early, critical, byOp, c)
			}
		}
	}
}
