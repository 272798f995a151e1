package resolver_test // feature: probe

import (
	"encoding/json"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/probe"
	"github.com/example/appsync-dynamo/local/sample"
)

// A root field's resolver answers the selection probe with what AppSync
// told it, and only when the header names that field: without the header,
// or naming another field, the post is read as ever.
func TestARootFieldAnswersTheSelectionProbe(t *testing.T) {
	h := sampleHandler(t)
	e := withSelection(ev("Query", "post", map[string]string{"id": sample.HelloPost}, nil), "{\n  id\n  title\n}", "id", "title")
	for _, c := range []struct {
		headers map[string]string
		probed  bool
	}{
		{map[string]string{probe.Header: "Query.post"}, true},
		{map[string]string{"X-Selection-Probe": "Query.post"}, true},
		{map[string]string{probe.Header: "Post.comments"}, false},
		{map[string]string{"x-api-key": "Query.post " + probe.Header}, false},
		{nil, false},
	} {
		e.Request, _ = json.Marshal(map[string]any{"headers": c.headers})
		out, ierr, m := invoke(t, h, mustJSON(t, e))
		if !c.probed {
			if ierr != nil || m.Total() == 0 {
				t.Errorf("headers %v: %s, %v, %d requests; want the post read", c.headers, out, ierr, m.Total())
			}
			continue
		}
		if ierr == nil || ierr.Type != probe.ErrorType || m.Total() != 0 {
			t.Fatalf("headers %v: %s, %v, %d requests; want the probe's error and no request", c.headers, out, ierr, m.Total())
		}
		var seen probe.Selection
		if err := json.Unmarshal([]byte(ierr.Message), &seen); err != nil || seen.SelectionSetGraphQL != e.Info.SelectionSetGraphQL ||
			len(seen.SelectionSetList) != 2 || seen.SelectionSetList[1] != "title" {
			t.Errorf("probe answered %q (%v)", ierr.Message, err)
		}
	}
	// A batch (fields of objects, which child.js probes) is never probed here.
	batch := []appsync.Event{e, e}
	batch[0].Request, _ = json.Marshal(map[string]any{"headers": map[string]string{probe.Header: "Query.post"}})
	if _, ierr, _ := invoke(t, h, mustJSON(t, batch)); ierr != nil {
		t.Errorf("a batch was probed: %v", ierr)
	}
}
