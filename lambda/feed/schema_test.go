package feed_test

import (
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/routecheck"
	"github.com/example/appsync-dynamo/schema"
)

// The feature's schema merges into the core's, adding Query.feed alone, for
// signed-in callers only, and its routes join the core's.
func TestTheFeaturesSchemaAndRoutes(t *testing.T) {
	core, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	merged, err := schema.Load(feed.SDL)
	if err != nil {
		t.Fatal(err)
	}
	var added []string
	for _, f := range merged.Query.Fields {
		if core.Query.Fields.ForName(f.Name) == nil && !slices.Contains([]string{"__schema", "__type"}, f.Name) {
			added = append(added, f.Name)
		}
	}
	if !slices.Equal(added, []string{"feed"}) || len(merged.Types) != len(core.Types) {
		t.Errorf("the feature adds Query fields %v and %d types, want [feed] and none", added, len(merged.Types)-len(core.Types))
	}
	f := merged.Query.Fields.ForName("feed")
	if f.Type.String() != "PostConnection!" || f.Directives.ForName("aws_cognito_user_pools") == nil || f.Directives.ForName("aws_api_key") != nil {
		t.Errorf("Query.feed: %s, directives %v", f.Type, f.Directives)
	}
	routecheck.Match(t, merged, resolver.NewRoutes(feed.Routes))
}
