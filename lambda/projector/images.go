package projector

import (
	"strings"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Stream images: an item as a record of the table's stream carries it, read
// by the projections. A missing or mistyped attribute reads as absent, never
// as a panic (events' accessors panic on a type they do not hold).

// ImageString is the string attribute name of a stream image; "" when it is
// absent or not a string.
func ImageString(img map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := img[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}

// PublishedPlace is a post image's place among its author's published posts,
// its GSI1 sort key ("POST#<ulid of its publication>": store.PublishedSK); "" for
// no image, a draft, or an image with no such key.
func PublishedPlace(img map[string]events.DynamoDBAttributeValue) string {
	if img == nil || ImageString(img, "status") == store.StatusDraft {
		return ""
	}
	if sk := ImageString(img, store.AttrGSI1SK); strings.HasPrefix(sk, store.PublishedSK("")) {
		return sk
	}
	return ""
}
