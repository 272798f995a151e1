package smoke

// How AppSync writes a merged field's selection: probes that select one
// field twice, the second occurrence adding a field the first lacks, with
// the resolver.ProbeHeader that makes the field's resolver (the function for
// a root field, appsyncjs/child.js for a field of an object) answer with the
// selectionSetGraphQL and selectionSetList AppSync gave it.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/lambda/selection"
)

// A probe selects the field Probed twice; only the second occurrence
// selects Added (a field's name in the text, its path in the list).
type probe struct {
	Shape, Query, Probed string
	Added                struct{ Text, Path string }
}

// probes are the shapes of a merged field that the Lambda's reading must
// hold for: a root field and a field of an object, each selected again in a
// named fragment, an inline fragment and directly.
var probes = []probe{
	{Shape: "a root field again in a fragment on Query", Probed: "Query.post",
		Query: `query($p: ID!) { post(id: $p) { id } ...Q } fragment Q on Query { post(id: $p) { title } }`},
	{Shape: "a root field again in an inline fragment", Probed: "Query.post",
		Query: `query($p: ID!) { post(id: $p) { id } ... on Query { post(id: $p) { title } } }`},
	{Shape: "a root field written twice", Probed: "Query.post",
		Query: `query($p: ID!) { post(id: $p) { id } post(id: $p) { title } }`},
	{Shape: "an object's field again in a named fragment", Probed: "Post.comments",
		Query: `query($p: ID!) { post(id: $p) { comments { items { id } } ...C } } fragment C on Post { comments { items { body } } }`},
	{Shape: "an object's field again in an inline fragment", Probed: "Post.comments",
		Query: `query($p: ID!) { post(id: $p) { comments { items { id } } ... on Post { comments { items { body } } } } }`},
	{Shape: "an object's field written twice", Probed: "Post.comments",
		Query: `query($p: ID!) { post(id: $p) { comments { items { id } } comments { items { body } } } }`},
}

func init() {
	for i := range probes {
		if probes[i].Probed == "Query.post" {
			probes[i].Added.Text, probes[i].Added.Path = "title", "title"
		} else {
			probes[i].Added.Text, probes[i].Added.Path = "body", "items/body"
		}
	}
}

// checkReading runs the probes on the post postID, says which reading each
// shows, and fails when the target's function reads every occurrence's
// selection where AppSync writes less.
func checkReading(ctx context.Context, t Target, postID string, say func(string, ...any)) error {
	every := 0
	for _, p := range probes {
		r, err := post(ctx, t, false, p.Query, map[string]any{"p": postID}, resolver.ProbeHeader, p.Probed)
		if err != nil {
			return failed(say, "the selection probe of "+p.Shape, r, err)
		}
		text, list, err := readingOf(r, p)
		if err != nil {
			say("FAIL the selection probe of %s: %v", p.Shape, err)
			return fmt.Errorf("the selection probe of %s: %w", p.Shape, err)
		}
		if text == selection.EveryOccurrence {
			every++
		}
		say("ok   %s: %s is told selectionSetGraphQL %s, selectionSetList %s", p.Shape, p.Probed, text, list)
	}
	switch {
	case every == len(probes) && t.Reading == selection.EveryOccurrence:
		say("ok   AppSync writes every occurrence's selection, as the function reads it")
	case every == len(probes):
		say("ok   AppSync writes every occurrence's selection: the function reads it as %s, right and dearer; "+
			"cdk deploy -c selectionReading=%s makes it cheaper (docs/deploying.md)", t.Reading, selection.EveryOccurrence)
	case t.Reading == selection.EveryOccurrence:
		say("FAIL AppSync writes the first occurrence's selection in %d of %d shapes, and the function reads every occurrence's: "+
			"queries that select a field twice can be answered wrong; deploy with -c selectionReading=%s", len(probes)-every, len(probes), selection.FirstOccurrence)
		return fmt.Errorf("the function reads every occurrence's selection, and AppSync writes the first's only")
	default:
		say("ok   AppSync writes the first occurrence's selection in %d of %d shapes: the function reads it as %s, right under it",
			len(probes)-every, len(probes), t.Reading)
	}
	return nil
}

// readingOf reads the probe's answer: the reading under which AppSync wrote
// selectionSetGraphQL, which the Lambda and child.js read, and that under
// which it wrote selectionSetList, or an error when the probe was not
// answered.
func readingOf(r response, p probe) (text, list selection.Reading, err error) {
	for _, e := range r.Errors {
		if e.ErrorType != resolver.ProbeErrorType {
			continue
		}
		var seen resolver.ProbedSelection
		if err := json.Unmarshal([]byte(e.Message), &seen); err != nil {
			return 0, 0, fmt.Errorf("the probe's answer %q is not its selection: %v", e.Message, err)
		}
		of := func(added bool) selection.Reading {
			if added {
				return selection.EveryOccurrence
			}
			return selection.FirstOccurrence
		}
		return of(strings.Contains(seen.SelectionSetGraphQL, p.Added.Text)), of(slices.Contains(seen.SelectionSetList, p.Added.Path)), nil
	}
	b, _ := json.Marshal(r)
	return 0, 0, fmt.Errorf("%s did not answer the probe (%s): %s", p.Probed, resolver.ProbeHeader, b)
}
