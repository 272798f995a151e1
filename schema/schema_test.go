package schema_test

import (
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/schema"
)

func mustLoad(t *testing.T) *ast.Schema {
	t.Helper()
	s, err := schema.Load()
	if err != nil {
		t.Fatalf("schema/schema.graphql does not load: %v", err)
	}
	return s
}

// The names of the schema are a contract (additions are welcome, renames are
// not): tests outside the project use them. Each is there, in this order;
// a field added among them is no change to the contract.
func TestContractFields(t *testing.T) {
	s := mustLoad(t)
	want := map[string][]string{
		"Query":              {"user", "post", "posts", "me"},
		"Mutation":           {"createUser", "updateUser", "createPost", "updatePost", "deletePost", "publishPost", "createComment", "deleteComment", "follow", "unfollow", "likePost", "unlikePost"},
		"Subscription":       {"onCreateComment"},
		"User":               {"id", "handle", "name", "email", "bio", "createdAt", "postCount", "followerCount", "followingCount", "posts", "comments", "following", "followers"},
		"Post":               {"id", "authorId", "author", "title", "body", "createdAt", "updatedAt", "commentCount", "likeCount", "status", "comments", "likes", "likedByMe"},
		"Comment":            {"id", "postId", "post", "authorId", "author", "body", "createdAt"},
		"Follow":             {"followerId", "followedId", "follower", "followed", "createdAt"},
		"Like":               {"user", "likedAt"},
		"LikeConnection":     {"items", "nextToken"},
		"PostConnection":     {"items", "nextToken"},
		"CommentConnection":  {"items", "nextToken"},
		"UserConnection":     {"items", "nextToken"},
		"CreateUserInput":    {"handle", "name", "email", "bio"},
		"UpdateUserInput":    {"name", "bio"},
		"CreatePostInput":    {"title", "body", "status"},
		"UpdatePostInput":    {"id", "title", "body"},
		"CreateCommentInput": {"postId", "body"},
	}
	for typ, fields := range want {
		def := s.Types[typ]
		if def == nil {
			t.Errorf("type %s is missing", typ)
			continue
		}
		var got []string
		for _, f := range def.Fields {
			if slices.Contains(fields, f.Name) {
				got = append(got, f.Name)
			}
		}
		if !slices.Equal(got, fields) {
			t.Errorf("%s has the contract's fields %v, want %v (in this order: a renamed or moved field breaks the tests that use them)", typ, got, fields)
		}
	}
}

func TestTypesAndArguments(t *testing.T) {
	s := mustLoad(t)
	checks := []struct{ typ, field, wantType string }{
		{"Query", "user", "User"},
		{"Query", "posts", "[Post]!"},
		{"Mutation", "createUser", "User!"},
		{"Mutation", "unfollow", "Follow"},
		{"User", "email", "AWSEmail"},
		{"User", "createdAt", "AWSDateTime!"},
		{"User", "posts", "PostConnection!"},
		{"Post", "commentCount", "Int!"},
		{"PostConnection", "items", "[Post!]!"},
	}
	for _, c := range checks {
		f := s.Types[c.typ].Fields.ForName(c.field)
		if f == nil || f.Type.String() != c.wantType {
			t.Errorf("%s.%s type = %v, want %s", c.typ, c.field, f, c.wantType)
		}
	}
	for _, conn := range []string{"posts", "comments", "following", "followers"} {
		f := s.Types["User"].Fields.ForName(conn)
		if f.Arguments.ForName("limit") == nil || f.Arguments.ForName("nextToken") == nil {
			t.Errorf("User.%s lacks limit/nextToken", conn)
		}
	}
	if s.Subscription == nil || s.Subscription.Fields.ForName("onCreateComment").Directives.ForName("aws_subscribe") == nil {
		t.Error("Subscription.onCreateComment must be @aws_subscribe(mutations: [\"createComment\"])")
	}
	if d := s.Types["Query"].Fields.ForName("me").Directives; d.ForName("aws_cognito_user_pools") == nil || d.ForName("aws_api_key") != nil {
		t.Error("Query.me must be Cognito user pools only")
	}
}

// A typo in the schema file must fail: the loader rejects unknown types.
func TestLoadRejectsBrokenSchema(t *testing.T) {
	saved := schema.SDL
	defer func() { schema.SDL = saved }()
	schema.SDL = saved + "\ntype Broken { field: NoSuchType }\n"
	if _, err := schema.Load(); err == nil {
		t.Fatal("a schema naming an unknown type loaded without error")
	}
}
