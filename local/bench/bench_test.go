package bench_test

import (
	"testing"

	"github.com/example/appsync-dynamo/local/bench"
	"github.com/example/appsync-dynamo/local/storetest"
)

// The project's claims, checked on every run: at most one Lambda invocation
// per nesting level (the seed query's authors span batches of 100, so that
// level may take more than one), and several times fewer DynamoDB requests
// than the naive layout on the nested queries.
func TestProjectBeatsNaiveLayout(t *testing.T) {
	rows, err := bench.Run(t.Context(), storetest.Endpoint(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + bench.Table(rows))
	seed := rows[0]
	// 10 posts x 20 comments = 200 author lookups: 2 batches of 100.
	if seed.Project.Invocations > seed.Query.Levels+1 {
		t.Errorf("seed query: %d invocations for %d levels", seed.Project.Invocations, seed.Query.Levels)
	}
	for _, r := range rows[:2] {
		if r.Naive.Requests < 3*r.Project.Requests {
			t.Errorf("%s: %d DynamoDB requests vs %d naive: want at least 3x fewer", r.Query.Name, r.Project.Requests, r.Naive.Requests)
		}
	}
	for _, r := range rows {
		if r.Project.Invocations > r.Naive.Invocations || r.Project.Requests > r.Naive.Requests {
			t.Errorf("%s costs more than the naive layout: %+v vs %+v", r.Query.Name, r.Project, r.Naive)
		}
	}
}
