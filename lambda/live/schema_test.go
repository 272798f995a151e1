package live_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/live"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/routecheck"
	"github.com/example/appsync-dynamo/schema"
)

// The feature's schema merges into the core's, adding
// Subscription.onPostActivity alone, on the mutations that return a post
// it follows, and its routes (both subscription fields) join the core's.
func TestTheFeaturesSchemaAndRoutes(t *testing.T) {
	core, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	merged, err := schema.Load(live.SDL)
	if err != nil {
		t.Fatal(err)
	}
	if n, m := len(merged.Subscription.Fields), len(core.Subscription.Fields); n != m+1 || len(merged.Types) != len(core.Types) {
		t.Errorf("the feature adds %d Subscription fields and %d types, want 1 and none", n-m, len(merged.Types)-len(core.Types))
	}
	f := merged.Subscription.Fields.ForName("onPostActivity")
	if f == nil || f.Type.String() != "Post" || f.Arguments.ForName("id") == nil {
		t.Fatalf("Subscription.onPostActivity: %v", f)
	}
	for _, m := range f.Directives.ForName("aws_subscribe").Arguments.ForName("mutations").Value.Children {
		if mutation := merged.Mutation.Fields.ForName(m.Value.Raw); mutation == nil || mutation.Type.Name() != "Post" {
			t.Errorf("onPostActivity listens to %s, which returns no Post", m.Value.Raw)
		}
	}
	routecheck.Match(t, merged, resolver.NewRoutes(live.Routes))
}
