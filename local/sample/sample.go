// Package sample is the seed documents' example data set: alice, bob and
// carol; alice's post "Hello" with a comment from bob and one from carol;
// alice following bob; bob liking the post. IDs and timestamps are fixed, so outputs replayed
// against it (events/ and their golden files) are stable.
package sample

import "github.com/example/appsync-dynamo/lambda/store"

// IDs of the sample entities.
const (
	Alice        = "u_alice"
	Bob          = "u_bob"
	Carol        = "u_carol"
	HelloPost    = "01HWMMR280YFZMTH8Y8AF1G8GN"
	BobComment   = "01HWMS1CS0NBQ0D8PP9DPHNBE9"
	CarolComment = "01HWMXAQA0WM1HWJWSQW8TW2KS"
	BobLike      = "01HWMS1CS0NBQ0D8PP9DPHNBE0"
)

func ptr(s string) *string { return &s }

// Data returns the data set, with counts consistent with its children.
func Data() store.Dataset {
	return store.Dataset{
		Users: []store.User{
			{ID: Alice, Handle: "alice", Name: "Alice", Email: ptr("alice@example.com"), Bio: ptr("Writes about GraphQL and DynamoDB."),
				CreatedAt: "2024-04-28T09:00:00.000Z", PostCount: 1, FollowingCount: 1},
			{ID: Bob, Handle: "bob", Name: "Bob", Email: ptr("bob@example.com"),
				CreatedAt: "2024-04-28T09:05:00.000Z", FollowerCount: 1},
			{ID: Carol, Handle: "carol", Name: "Carol", Email: ptr("carol@example.com"), Bio: ptr("Reads everything."),
				CreatedAt: "2024-04-28T09:10:00.000Z"},
		},
		Posts: []store.Post{
			{ID: HelloPost, AuthorID: Alice, Title: "Hello", Body: "My first post about single-table design.",
				CreatedAt: "2024-04-29T10:00:00.000Z", UpdatedAt: "2024-04-29T10:00:00.000Z", CommentCount: 2, LikeCount: 1},
		},
		Comments: []store.Comment{
			{ID: BobComment, PostID: HelloPost, AuthorID: Bob, Body: "Nice post!", CreatedAt: "2024-04-29T11:15:00.000Z"},
			{ID: CarolComment, PostID: HelloPost, AuthorID: Carol, Body: "Welcome!", CreatedAt: "2024-04-29T12:30:00.000Z"},
		},
		Follows: []store.Follow{
			{FollowerID: Alice, FollowedID: Bob, CreatedAt: "2024-04-29T09:00:00.000Z"},
		},
		Likes: []store.Like{
			{ID: BobLike, PostID: HelloPost, UserID: Bob, LikedAt: "2024-04-29T11:14:00.000Z"},
		},
	}
}
