package live_test

import (
	"fmt"
	"strings"
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
	if n, m := len(merged.Subscription.Fields), len(core.Subscription.Fields); n != m+2 || len(merged.Types) != len(core.Types)+1 {
		t.Errorf("the feature adds %d Subscription fields and %d types, want 2 and 1 (onFeed's FeedPush)", n-m, len(merged.Types)-len(core.Types))
	}
	if !strings.Contains(live.SDL, "at most "+humanize(live.MaxReaderBytes)+" bytes of them") {
		t.Errorf("pushFeed's description does not give MaxReaderBytes, %d", live.MaxReaderBytes)
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

// humanize writes n with a comma every three digits.
func humanize(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
