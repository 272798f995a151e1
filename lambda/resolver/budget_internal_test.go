package resolver

import (
	"reflect"
	"strings"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/payload"
	"github.com/example/appsync-dynamo/lambda/store"
	"github.com/example/appsync-dynamo/schema"
)

// worst is n characters that encode to the most JSON bytes the Lambda sends
// for valid text: U+2028, which encoding/json always escapes to six bytes.
func worst(n int) string { return strings.Repeat("\u2028", n) }

// setLargest sets v, a text field or a list of text, to the largest value
// of limit (in the characters that encode longest), and reports whether it
// could: false for a zero limit or another kind of field.
func setLargest(v reflect.Value, limit inputLimit) bool {
	text := reflect.ValueOf(worst(limit.chars))
	switch {
	case limit.chars == 0:
		return false
	case v.Kind() == reflect.String && limit.items == 0:
		v.Set(text)
	case v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.String && limit.items == 0:
		v.Set(reflect.New(v.Type().Elem()))
		v.Elem().Set(text)
	case v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.String && limit.items > 0:
		v.Set(reflect.MakeSlice(v.Type(), limit.items, limit.items))
		for i := range limit.items {
			v.Index(i).Set(text)
		}
	default:
		return false
	}
	return true
}

// TestLargestObjectsFitTheirBudgets checks the byte budgets against the
// largest objects the API accepts: each fits as a source in a full batch of
// each of its child fields, with room left for a prefetch where it carries
// one, and as the answer of each field that returns it.
func TestLargestObjectsFitTheirBudgets(t *testing.T) {
	id := strings.Repeat("i", 64)
	ts := "2024-05-01T00:00:00.000Z"
	email := strings.Repeat("e", maxEmailAddress-12) + "@example.com"
	user := store.User{ID: id, Handle: strings.Repeat("h", 30), Email: &email, CreatedAt: ts}
	post := store.Post{ID: id, AuthorID: id, CreatedAt: ts, UpdatedAt: ts, Status: store.StatusPublished}
	comment := store.Comment{ID: id, PostID: id, AuthorID: id, CreatedAt: ts}
	follow := store.Follow{FollowerID: id, FollowedID: id, CreatedAt: ts}
	like := store.Like{ID: id, PostID: id, UserID: id, LikedAt: ts}
	for _, v := range []any{&user, &post, &comment, &follow, &like} { // every other field at its largest: a count's, or its input's
		rv := reflect.ValueOf(v).Elem()
		for i := range rv.NumField() {
			name, _, _ := strings.Cut(rv.Type().Field(i).Tag.Get("json"), ",")
			field := rv.Type().Name() + "." + name
			if name == "" || name == "-" || !rv.Field(i).IsZero() {
				continue
			}
			if rv.Field(i).Kind() == reflect.Int { // a count: no limit but a large one's digits
				rv.Field(i).SetInt(1 << 30)
			} else if !setLargest(rv.Field(i), largestInputs[field]) {
				t.Errorf("the largest %s leaves %s unset: give its largest accepted value in largestInputs (mutations.go)", rv.Type().Name(), field)
			}
		}
	}
	sizes := map[string]int{"User": payload.Size(user), "Post": payload.Size(post), "Comment": payload.Size(comment),
		"Follow": payload.Size(follow), "Like": payload.Size(like)}
	t.Logf("largest objects, encoded: %v", sizes)

	table := NewRoutes()
	// A post carries its first comments; at least a few must fit beside it.
	if room := table.sourceBudget("Post") - sizes["Post"]; room < 4*sizes["Comment"] {
		t.Errorf("a post source has %d bytes left for its comments, fewer than 4 of the largest", room)
	}
	for typ, size := range sizes {
		if size > table.sourceBudget(typ) {
			t.Errorf("the largest %s (%d bytes) exceeds its source budget %d", typ, size, table.sourceBudget(typ))
		}
	}
	// Each field that returns one of them holds the largest: alone, or in a
	// page; a field returning an object of another type fails, named.
	sch, err := schema.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range table.All() {
		size, ok := sizes[r.Returns]
		switch {
		case !ok && sch.Types[r.Returns] != nil && sch.Types[r.Returns].Kind == ast.Scalar:
		case !ok:
			t.Errorf("%s returns a %s, which the test does not build at its largest: add one beside the others", r.Key(), r.Returns)
		case r.Shape == Connection && size > r.replyBudget()-pageEnvelope:
			t.Errorf("%s: a page cannot hold even one of the largest %s (%d bytes)", r.Key(), r.Returns, size)
		case size > r.replyBudget():
			t.Errorf("%s: the largest %s (%d bytes) exceeds the field's reply budget %d", r.Key(), r.Returns, size, r.replyBudget())
		}
	}
	// A full batch of events with the largest sources, and a full batch of the
	// largest answers, fit one payload.
	for _, r := range table.All() {
		if r.MaxBatchSize > 0 {
			if need := r.MaxBatchSize * (table.sourceBudget(r.Type) + payload.EventReserve); need > payload.MaxBytes {
				t.Errorf("%s: a full batch of sources takes %d bytes", r.Key(), need)
			}
		}
	}
}
