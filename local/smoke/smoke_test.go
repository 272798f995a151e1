package smoke_test

import (
	"fmt"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/local/devserver"
	"github.com/example/appsync-dynamo/local/sample"
	"github.com/example/appsync-dynamo/local/smoke"
	"github.com/example/appsync-dynamo/local/storetest"
)

// TestSmokeAgainstMakeDev runs the first-deploy check against the local API,
// as make smoke URL=... does against make dev.
func TestSmokeAgainstMakeDev(t *testing.T) {
	api, err := devserver.Open(t.Context(), devserver.Config{Endpoint: storetest.Endpoint(t),
		Table: fmt.Sprintf("smoke-%d", os.Getpid()), Data: sample.Data()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(devserver.Handler(api))
	defer srv.Close()
	var out strings.Builder
	if err := smoke.Run(t.Context(), smoke.Target{URL: srv.URL + "/graphql", Token: devserver.Token("smoke")}, &out); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "all checks passed") || !strings.Contains(out.String(), "InvalidNextToken") {
		t.Errorf("report:\n%s", out.String())
	}
	t.Logf("report:\n%s", out.String())
}
