package devserver_test

import (
	"testing"

	"github.com/example/appsync-dynamo/local/devserver"
)

// The caller the local AppSync sees: none for no header (API key), an IAM
// caller for a Signature V4 header (its access key its user), a user pool's
// for a token; an Authorization that is none of them is refused.
func TestIdentityOfEachAuthorization(t *testing.T) {
	if id, err := devserver.Identity("", "127.0.0.1"); id != nil || err != nil {
		t.Errorf("no header: %+v, %v", id, err)
	}
	id, err := devserver.Identity("AWS4-HMAC-SHA256 Credential=AKIDPROBE/20261205/us-east-1/appsync/aws4_request, SignedHeaders=host, Signature=0", "10.0.0.1")
	if err != nil || id == nil || id.Sub != "" || id.AccountID != devserver.LocalAccount || id.Username != "AKIDPROBE" || id.UserID() != "" {
		t.Errorf("Signature V4: %+v, %v", id, err)
	}
	if id, err := devserver.Identity(devserver.Token("alice"), "127.0.0.1"); err != nil || id == nil || id.Sub == "" || id.AccountID != "" {
		t.Errorf("a token: %+v, %v", id, err)
	}
	for _, bad := range []string{"AWS4-HMAC-SHA256 Credential=/20261205/us-east-1/appsync/aws4_request", "Basic dXNlcjpwYXNz"} {
		if _, err := devserver.Identity(bad, "127.0.0.1"); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
}
