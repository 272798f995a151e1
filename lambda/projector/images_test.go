package projector_test

import (
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// An image's attribute of another type, or none, reads as absent: no panic.
func TestImageStringReadsOnlyStrings(t *testing.T) {
	img := map[string]events.DynamoDBAttributeValue{
		"id":    events.NewStringAttribute("p1"),
		"n":     events.NewNumberAttribute("3"),
		"null":  events.NewNullAttribute(),
		"list":  events.NewListAttribute([]events.DynamoDBAttributeValue{events.NewStringAttribute("x")}),
		"bytes": events.NewBinaryAttribute([]byte("b")),
	}
	for name, want := range map[string]string{"id": "p1", "n": "", "null": "", "list": "", "bytes": "", "absent": ""} {
		if got := projector.ImageString(img, name); got != want {
			t.Errorf("ImageString(%s) = %q, want %q", name, got, want)
		}
	}
	if got := projector.ImageString(nil, "id"); got != "" {
		t.Errorf("ImageString(nil) = %q", got)
	}
}

// A post's place is its published GSI1 sort key: none for a draft, for no
// image, or for an image whose key is another's.
func TestPublishedPlaceIsAPublishedPostsKey(t *testing.T) {
	place := store.PublishedSK("01J0000000000000000000000A")
	image := func(status, gsi1sk string) map[string]events.DynamoDBAttributeValue {
		img := map[string]events.DynamoDBAttributeValue{store.AttrGSI1SK: events.NewStringAttribute(gsi1sk)}
		if status != "" {
			img["status"] = events.NewStringAttribute(status)
		}
		return img
	}
	for _, c := range []struct {
		name string
		img  map[string]events.DynamoDBAttributeValue
		want string
	}{
		{"published", image(store.StatusPublished, place), place},
		{"written before drafts", image("", place), place},
		{"draft", image(store.StatusDraft, place), ""},
		{"another key", image(store.StatusPublished, "COMMENT#x"), ""},
		{"no key", map[string]events.DynamoDBAttributeValue{"status": events.NewStringAttribute(store.StatusPublished)}, ""},
		{"a number for a key", map[string]events.DynamoDBAttributeValue{store.AttrGSI1SK: events.NewNumberAttribute("1")}, ""},
		{"no image", nil, ""},
	} {
		if got := projector.PublishedPlace(c.img); got != c.want {
			t.Errorf("%s: PublishedPlace = %q, want %q", c.name, got, c.want)
		}
	}
}
