package resolver_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/routecheck"
	"github.com/example/appsync-dynamo/schema"
)

// The core's routes are the core schema's fields that need the Lambda.
func TestRoutesMatchTheSchema(t *testing.T) {
	s, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	routecheck.Match(t, s, resolver.NewRoutes())
}

// A field routed twice, by the core and a feature, is refused.
func TestAFieldRoutedTwicePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("a table routing Query.post twice was made")
		}
	}()
	resolver.NewRoutes([]resolver.Route{{Type: "Query", Field: "post", Returns: "Post"}})
}
