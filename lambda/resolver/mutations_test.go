package resolver_test

import (
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/local/sample"
)

func as(e appsync.Event, userID string) appsync.Event {
	e.Identity = &appsync.Identity{Sub: userID, Username: userID}
	return e
}

// Every validation rule refuses the input with its errorType before any
// DynamoDB request, so nothing can have been written.
func TestMutationValidation(t *testing.T) {
	h := sampleHandler(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	user := func(handle, name, email string, bio any) map[string]any {
		in := map[string]any{"handle": handle, "name": name, "email": email}
		if bio != nil {
			in["bio"] = bio
		}
		return map[string]any{"input": in}
	}
	cases := []struct {
		name  string
		event appsync.Event
		want  string
	}{
		{"createUser handle too short", as(ev("Mutation", "createUser", user("ab", "A", "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser handle too long", as(ev("Mutation", "createUser", user(long(31), "A", "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser handle uppercase", as(ev("Mutation", "createUser", user("Dave", "A", "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser handle with #", as(ev("Mutation", "createUser", user("da#ve", "A", "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser empty name", as(ev("Mutation", "createUser", user("dave", "  ", "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser name too long", as(ev("Mutation", "createUser", user("dave", long(101), "a@example.com", nil), nil), "u_new"), "ValidationError"},
		{"createUser bad email", as(ev("Mutation", "createUser", user("dave", "Dave", "not-an-email", nil), nil), "u_new"), "ValidationError"},
		{"createUser email with name", as(ev("Mutation", "createUser", user("dave", "Dave", "Dave <d@example.com>", nil), nil), "u_new"), "ValidationError"},
		{"createUser bio too long", as(ev("Mutation", "createUser", user("dave", "Dave", "d@example.com", long(1001)), nil), "u_new"), "ValidationError"},
		{"createUser caller id with #", as(ev("Mutation", "createUser", user("dave", "Dave", "d@example.com", nil), nil), "u#1"), "ValidationError"},
		{"updateUser nothing", as(ev("Mutation", "updateUser", map[string]any{"input": map[string]any{}}, nil), sample.Alice), "ValidationError"},
		{"updateUser empty name", as(ev("Mutation", "updateUser", map[string]any{"input": map[string]any{"name": ""}}, nil), sample.Alice), "ValidationError"},
		{"updateUser bio too long", as(ev("Mutation", "updateUser", map[string]any{"input": map[string]any{"bio": long(1001)}}, nil), sample.Alice), "ValidationError"},
		{"createPost empty title", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": "", "body": "b"}}, nil), sample.Alice), "ValidationError"},
		{"createPost title too long", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": long(201), "body": "b"}}, nil), sample.Alice), "ValidationError"},
		{"createPost body too long", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": "t", "body": long(20001)}}, nil), sample.Alice), "ValidationError"},
		{"createPost empty body", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": "t", "body": ""}}, nil), sample.Alice), "ValidationError"},
		{"updatePost nothing", as(ev("Mutation", "updatePost", map[string]any{"input": map[string]any{"id": sample.HelloPost}}, nil), sample.Alice), "ValidationError"},
		{"updatePost title too long", as(ev("Mutation", "updatePost", map[string]any{"input": map[string]any{"id": sample.HelloPost, "title": long(201)}}, nil), sample.Alice), "ValidationError"},
		{"updatePost id with #", as(ev("Mutation", "updatePost", map[string]any{"input": map[string]any{"id": "a#b", "title": "t"}}, nil), sample.Alice), "ValidationError"},
		{"deletePost id too long", as(ev("Mutation", "deletePost", map[string]any{"id": long(65)}, nil), sample.Alice), "ValidationError"},
		{"createComment empty body", as(ev("Mutation", "createComment", map[string]any{"input": map[string]any{"postId": sample.HelloPost, "body": " "}}, nil), sample.Bob), "ValidationError"},
		{"createComment NUL body", as(ev("Mutation", "createComment", map[string]any{"input": map[string]any{"postId": sample.HelloPost, "body": "\u0000"}}, nil), sample.Bob), "ValidationError"},
		{"createComment zero-width body", as(ev("Mutation", "createComment", map[string]any{"input": map[string]any{"postId": sample.HelloPost, "body": "\u200b\u200b"}}, nil), sample.Bob), "ValidationError"},
		{"createPost blank title", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": "\u00a0\u2060\t", "body": "b"}}, nil), sample.Alice), "ValidationError"},
		{"createPost format-only body", as(ev("Mutation", "createPost", map[string]any{"input": map[string]any{"title": "t", "body": "\ufeff\u200d\r\n"}}, nil), sample.Alice), "ValidationError"},
		{"updateUser invisible name", as(ev("Mutation", "updateUser", map[string]any{"input": map[string]any{"name": "\u200b"}}, nil), sample.Alice), "ValidationError"},
		{"createComment body too long", as(ev("Mutation", "createComment", map[string]any{"input": map[string]any{"postId": sample.HelloPost, "body": long(2001)}}, nil), sample.Bob), "ValidationError"},
		{"createComment post id with #", as(ev("Mutation", "createComment", map[string]any{"input": map[string]any{"postId": "POST#x", "body": "b"}}, nil), sample.Bob), "ValidationError"},
		{"deleteComment id with #", as(ev("Mutation", "deleteComment", map[string]any{"postId": sample.HelloPost, "id": "x#y"}, nil), sample.Bob), "ValidationError"},
		{"follow yourself", as(ev("Mutation", "follow", map[string]any{"userId": sample.Bob}, nil), sample.Bob), "ValidationError"},
		{"follow id with #", as(ev("Mutation", "follow", map[string]any{"userId": "u#x"}, nil), sample.Bob), "ValidationError"},
		{"unfollow empty id", as(ev("Mutation", "unfollow", map[string]any{"userId": ""}, nil), sample.Bob), "ValidationError"},
	}
	for _, field := range []string{"createUser", "updateUser", "createPost", "updatePost", "deletePost", "createComment", "deleteComment", "follow", "unfollow"} {
		cases = append(cases, struct {
			name  string
			event appsync.Event
			want  string
		}{field + " with API key", ev("Mutation", field, map[string]any{"input": map[string]any{}}, nil), "Unauthorized"})
		iam := ev("Mutation", field, map[string]any{"input": map[string]any{}}, nil)
		iam.Identity = &appsync.Identity{AccountID: "123456789012", UserArn: "arn:aws:iam::123456789012:role/x"}
		cases = append(cases, struct {
			name  string
			event appsync.Event
			want  string
		}{field + " with IAM", iam, "Unauthorized"})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, ierr, m := invoke(t, h, mustJSON(t, c.event))
			if ierr == nil {
				t.Fatalf("accepted: %s", out)
			}
			if ierr.Type != c.want {
				t.Errorf("errorType = %s (%s), want %s", ierr.Type, ierr.Message, c.want)
			}
			if m.Total() != 0 {
				t.Errorf("%d DynamoDB requests for refused input: %+v", m.Total(), m.Calls())
			}
		})
	}
}

func TestFollowUnknownUserIsNotFound(t *testing.T) {
	h := sampleHandler(t)
	_, ierr, m := invoke(t, h, mustJSON(t, as(ev("Mutation", "follow", map[string]any{"userId": "u_nobody"}, nil), sample.Bob)))
	if ierr == nil || ierr.Type != "NotFound" {
		t.Errorf("error = %+v, want NotFound", ierr)
	}
	if m.Count("TransactWriteItems") != 1 {
		t.Errorf("calls = %+v", m.Calls())
	}
	out, ierr, _ := invoke(t, h, mustJSON(t, as(ev("Mutation", "unfollow", map[string]any{"userId": "u_nobody"}, nil), sample.Bob)))
	if ierr != nil || string(out) != "null" {
		t.Errorf("unfollow of nothing = %s, %v; want null", out, ierr)
	}
}
