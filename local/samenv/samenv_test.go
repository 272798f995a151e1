package samenv_test

import (
	"testing"

	"github.com/example/appsync-dynamo/local/samenv"
)

// SAM exits 0 when the container answered nothing or the function failed:
// the reply itself must be the function's answer to the event.
func TestCheckReply(t *testing.T) {
	batch := `[{"info":{}},{"info":{}},{"info":{}}]`
	for _, c := range []struct {
		name, event, reply string
		ok                 bool
	}{
		{"a batch answered", batch, `[{"data":1},{"data":null,"errorType":"NotFound","errorMessage":"x"},{"data":3}]`, true},
		{"a batch answered short", batch, `[{"data":1},{"data":2}]`, false},
		{"a batch answered by an error", batch, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, false},
		{"a batch answered by nothing", batch, ``, false},
		{"an event answered", `{"info":{}}`, `{"id":"p1","title":"t"}`, true},
		{"an event answered with a list", `{"info":{}}`, `[{"id":"p1"},null]`, true},
		{"an event answered with a field's error", `{"info":{}}`, `{"errorType":"NotFound","errorMessage":"no such post"}`, true},
		{"an event answered by the runtime's error", `{"info":{}}`, `{"errorType":"Runtime.ExitError","errorMessage":"exit status 2"}`, false},
		{"an event timed out", `{"info":{}}`, `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 10.00 seconds"}`, false},
		{"an event answered by nothing", `{"info":{}}`, ``, false},
	} {
		err := samenv.CheckReply([]byte(c.event), []byte(c.reply))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

func TestHostEndpoint(t *testing.T) {
	if got := samenv.HostEndpoint("linux", "172.18.0.1", 8000); got != "http://172.18.0.1:8000" {
		t.Errorf("linux: %s", got)
	}
	if got := samenv.HostEndpoint("darwin", "172.18.0.1", 8000); got != "http://host.docker.internal:8000" {
		t.Errorf("darwin: %s", got)
	}
}
