package trending_test

import (
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/trending"
	"github.com/example/appsync-dynamo/local/routecheck"
	"github.com/example/appsync-dynamo/schema"
)

// The feature's fragment merges into the core's schema, with the contract's
// names (tests outside the project use them), and its routes are the
// merged schema's fields that need the Lambda.
func TestTheFeaturesSchemaAndRoutes(t *testing.T) {
	s, err := schema.Load(trending.SDL)
	if err != nil {
		t.Fatal(err)
	}
	core, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	var query []string // the core's, and Query.trending after them
	for _, f := range core.Types["Query"].Fields {
		if f.Name != "__typename" && f.Name != "__schema" && f.Name != "__type" {
			query = append(query, f.Name)
		}
	}
	for typ, fields := range map[string][]string{
		"Query":              append(query, "trending"),
		"TrendingConnection": {"items"},
		"TrendingPost":       {"post", "score", "likeCount", "commentCount"},
	} {
		var got []string
		for _, f := range s.Types[typ].Fields {
			if f.Name != "__typename" && f.Name != "__schema" && f.Name != "__type" {
				got = append(got, f.Name)
			}
		}
		if !slices.Equal(got, fields) {
			t.Errorf("%s fields = %v, want %v", typ, got, fields)
		}
	}
	if d := s.Types["Query"].Fields.ForName("trending"); d == nil || d.Type.String() != "TrendingConnection!" {
		t.Errorf("Query.trending: %v", d)
	}
	routecheck.Match(t, s, resolver.NewRoutes(trending.Routes))
}
