package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/example/appsync-dynamo/lambda/errs"
)

func TestKindsAndMessages(t *testing.T) {
	cause := errors.New("dial tcp 10.0.0.1:443: connection refused")
	internal := errs.Wrap("store.Post", errs.Internal, "internal error", cause)
	notFound := fmt.Errorf("resolving: %w", errs.E("store.Post", errs.NotFound, "post not found"))
	cases := []struct {
		err      error
		kind     errs.Kind
		typ, msg string
	}{
		{internal, errs.Internal, "InternalError", "internal error"},
		{notFound, errs.NotFound, "NotFound", "post not found"},
		{cause, errs.Internal, "InternalError", "internal error"},
		{errs.E("x", errs.InvalidNextToken, "bad token"), errs.InvalidNextToken, "InvalidNextToken", "bad token"},
	}
	for _, c := range cases {
		if errs.KindOf(c.err) != c.kind || errs.KindOf(c.err).String() != c.typ || errs.PublicMessage(c.err) != c.msg {
			t.Errorf("%v: kind %v (%s), message %q", c.err, errs.KindOf(c.err), errs.KindOf(c.err), errs.PublicMessage(c.err))
		}
	}
	if !errors.Is(internal, cause) {
		t.Error("the cause is not kept for the logs")
	}
	if errs.Wrap("op", errs.Internal, "m", nil) != nil {
		t.Error("wrapping nil must give nil")
	}
}
