package endtoend_test

import (
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/example/appsync-dynamo/local/endtoend"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The two functions of the end-to-end benchmark do the same work: for each
// batch, every event's user (its name) is the same in Go's reply and in
// Node's, read from the same table, and each call was timed.
func TestBothFunctionsAnswerTheBatchesAlike(t *testing.T) {
	if testing.Short() {
		t.Skip("needs DynamoDB Local and the Node baseline's packages, which make test installs: skipped under -short (make check)")
	}
	f, err := endtoend.Start(t.Context(), storetest.Endpoint(t), fmt.Sprintf("endtoend-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Node.Close()
	results, err := endtoend.Run(t.Context(), f, endtoend.Cases(), 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 3 {
		t.Fatalf("%d cases measured, want Post.author/100, Comment.author/100 and Post.comments/20-a-Query", len(results))
	}
	for _, r := range results {
		if r.Case == "Post.comments/20-a-Query" {
			checkPage(t, r)
			continue
		}
		names := func(reply []byte) []string {
			var items []struct {
				Data *struct{ Name string } `json:"data"`
			}
			if err := json.Unmarshal(reply, &items); err != nil {
				t.Fatalf("%s: Go: %v", r.Case, err)
			}
			out := make([]string, len(items))
			for i, item := range items {
				if item.Data != nil {
					out[i] = item.Data.Name
				}
			}
			return out
		}
		var nodeReply []*struct{ Name string }
		if err := json.Unmarshal(r.NodeReply, &nodeReply); err != nil {
			t.Fatalf("%s: Node: %v", r.Case, err)
		}
		goNames, nodeNames := names(r.GoReply), make([]string, len(nodeReply))
		if safe := names(r.SafeReply); !reflect.DeepEqual(safe, goNames) {
			t.Errorf("%s: Go under the safe reading answered %q, under every-occurrence %q", r.Case, safe, goNames)
		}
		for i, u := range nodeReply {
			if u != nil {
				nodeNames[i] = u.Name
			}
		}
		if len(goNames) != 100 || !reflect.DeepEqual(goNames, nodeNames) || goNames[0] == "" {
			t.Errorf("%s: Go answered %q, Node %q", r.Case, goNames, nodeNames)
		}
		if len(r.Go.Calls) != 4 || len(r.Node.Calls) != 4 || len(r.Floor.Calls) != 4 || len(r.Safe.Calls) != 4 || len(r.SafeFloor.Calls) != 4 ||
			len(r.Go.Rounds) != 2 || r.Go.Min() <= 0 || r.Node.Min() <= 0 || r.Floor.Min() <= 0 || r.Safe.Min() <= 0 || r.SafeFloor.Min() <= 0 {
			t.Errorf("%s: calls timed: Go %v, Node %v", r.Case, r.Go.Calls, r.Node.Calls)
		}
	}
	if table := endtoend.Table(results, 2, 2); len(table) == 0 {
		t.Error("no table")
	}
}

// checkPage checks that the functions read the same page of comments.
func checkPage(t *testing.T, r endtoend.Result) {
	t.Helper()
	type page struct {
		Items []struct{ ID, Body string }
	}
	bodies := func(p page) []string {
		var out []string
		for _, c := range p.Items {
			out = append(out, c.ID+" "+c.Body)
		}
		return out
	}
	var goReply, safeReply []struct{ Data page }
	var nodeReply []page
	for _, d := range []struct {
		reply []byte
		into  any
	}{{r.GoReply, &goReply}, {r.SafeReply, &safeReply}, {r.NodeReply, &nodeReply}} {
		if err := json.Unmarshal(d.reply, d.into); err != nil {
			t.Fatalf("%s: %v: %s", r.Case, err, d.reply)
		}
	}
	if len(goReply) != 1 || len(safeReply) != 1 || len(nodeReply) != 1 || len(goReply[0].Data.Items) != 20 ||
		!reflect.DeepEqual(bodies(goReply[0].Data), bodies(nodeReply[0])) || !reflect.DeepEqual(bodies(goReply[0].Data), bodies(safeReply[0].Data)) {
		t.Errorf("%s: Go %s, under the safe reading %s, Node %s", r.Case, r.GoReply, r.SafeReply, r.NodeReply)
	}
}
