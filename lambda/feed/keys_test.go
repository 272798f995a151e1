package feed_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/feed"
	"github.com/example/appsync-dynamo/lambda/store"
)

func TestKeyFormats(t *testing.T) {
	tests := []struct{ got, want string }{
		{feed.PK("u_carol"), "FEED#u_carol"},
		{feed.PullSK("u_alice"), "#PULL#u_alice"},
		{feed.CountedSK(store.PublishedSK("01HW")), "COUNT#01HW"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}
