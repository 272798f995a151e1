package store_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
)

func TestKeyFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{store.UserPK("u_alice"), "USER#u_alice"},
		{store.PostPK("01HW"), "POST#01HW"},
		{store.CommentSK("01HX"), "COMMENT#01HX"},
		{store.HandlePK("alice"), "HANDLE#alice"},
		{store.FollowsSK("u_bob"), "FOLLOWS#u_bob"},
		{store.FollowersPK("u_bob"), "FOLLOWERS#u_bob"},
		{store.FollowerSK("u_alice"), "FOLLOWER#u_alice"},
		{store.AuthorPK("u_alice"), "USER#u_alice"},
		{store.PublishedSK("01HW"), "POST#01HW"},
		{store.DraftSK("01HW"), "DRAFT#01HW"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	// "#" sorts before letters: a partition's metadata item comes first.
	if !(store.SKMetadata < store.CommentSK("0") && store.SKMetadata < store.FollowsSK("0")) {
		t.Error("#METADATA must sort before COMMENT# and FOLLOWS# keys")
	}
}

func TestValidID(t *testing.T) {
	valid := []string{"a", "u_alice", "01HWMMR280YFZMTH8Y8AF1G8GN", "x-y_Z9", strings.Repeat("a", 64)}
	invalid := []string{"", "a#b", "USER#x", "a b", "ü", "a/b", "a.b", strings.Repeat("a", 65), "a\x00"}
	for _, id := range valid {
		if !store.ValidID(id) {
			t.Errorf("ValidID(%q) = false, want true", id)
		}
	}
	for _, id := range invalid {
		if store.ValidID(id) {
			t.Errorf("ValidID(%q) = true, want false", id)
		}
	}
}

func TestValidHandle(t *testing.T) {
	for h, want := range map[string]bool{
		"alice": true, "a_1": true, strings.Repeat("z", 30): true,
		"al": false, "Alice": false, "al-ice": false, "al#ce": false, strings.Repeat("z", 31): false,
	} {
		if got := store.ValidHandle(h); got != want {
			t.Errorf("ValidHandle(%q) = %v, want %v", h, got, want)
		}
	}
}

func ExamplePostPK() {
	fmt.Println(store.PostPK("01HWMMR280YFZMTH8Y8AF1G8GN"), store.CommentSK("01HWMS1CS0NBQ0D8PP9DPHNBE9"))
	// Output: POST#01HWMMR280YFZMTH8Y8AF1G8GN COMMENT#01HWMS1CS0NBQ0D8PP9DPHNBE9
}

// User.AppendJSON writes what payload.Marshal writes of the user's fields
// (a type without the user's methods: User's own MarshalJSON is
// AppendJSON).
func FuzzUserAppendJSON(f *testing.F) {
	type plainUser store.User
	f.Add("u_alice", "alice", "Alice <A&B>", "a@example.com", true, "bio\u2028\xff", false, "2024-05-01T00:00:00.000Z", 1, -2, 1<<40)
	f.Fuzz(func(t *testing.T, id, handle, name, email string, hasEmail bool, bio string, hasBio bool, at string, a, b, c int) {
		u := store.User{ID: id, Handle: handle, Name: name, CreatedAt: at, PostCount: a, FollowerCount: b, FollowingCount: c}
		if hasEmail {
			u.Email = &email
		}
		if hasBio {
			u.Bio = &bio
		}
		want, err := payload.Marshal(plainUser(u))
		if err != nil {
			t.Fatal(err)
		}
		if got := u.AppendJSON(nil); string(got) != string(want) {
			t.Fatalf("AppendJSON = %s\nMarshal    = %s", got, want)
		}
	})
}
