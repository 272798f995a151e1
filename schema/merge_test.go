package schema_test

import (
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/schema"
)

// A fragment's extensions go into their types, comments and all, and its
// other definitions after the schema; the schema's own text stays as it is.
func TestMergeMovesExtensionsIntoTheirTypes(t *testing.T) {
	core := "# the core\ntype Query @aws_api_key {\n  # a user\n  user(id: ID): User # \"}\" in a comment\n}\n\ntype User {\n  id: ID!\n}\n"
	fragment := "# a feature\n\nextend type Query {\n  # the feature's field\n  hello(greeting: String = \"{hi}\"): Hello!\n}\n\n# its type\ntype Hello {\n  text: String\n}\n\nextend type User {\n  hello: Hello\n}\n"
	got, err := schema.Merge(core, fragment)
	if err != nil {
		t.Fatal(err)
	}
	want := "# the core\ntype Query @aws_api_key {\n  # a user\n  user(id: ID): User # \"}\" in a comment\n  # the feature's field\n  hello(greeting: String = \"{hi}\"): Hello!\n}\n\ntype User {\n  id: ID!\n  hello: Hello\n}\n\n# its type\ntype Hello {\n  text: String\n}\n"
	if got != want {
		t.Errorf("merged:\n%s\nwant:\n%s", got, want)
	}
	if _, err := schema.Merge(core, "extend type Nothing {\n  x: Int\n}\n"); err == nil || !strings.Contains(err.Error(), "no type Nothing") {
		t.Errorf("an extension of a type the schema lacks: %v", err)
	}
	if _, err := schema.Merge(core, "type Open {\n  x: Int\n"); err == nil {
		t.Error("a definition not closed merged")
	}
}
