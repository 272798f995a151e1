package smoke // feature: probe

// How AppSync writes a merged field's selection: lambda/probe's probes, run
// on the smoke test's post, each shape's reading said, and a failure when
// the target's function reads every occurrence's selection where AppSync
// writes less.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/probe"
)

// checkReading runs the probes on the post postID, says which reading each
// shows, and fails when the target's function reads every occurrence's
// selection where AppSync writes less.
func checkReading(ctx context.Context, t Target, postID string, say func(string, ...any)) error {
	send := func(ctx context.Context, query string, vars map[string]any, headers ...string) (probe.Response, error) {
		r, err := post(ctx, t, false, query, vars, headers...)
		var pr probe.Response
		if err == nil {
			b, _ := json.Marshal(r)
			err = json.Unmarshal(b, &pr)
		}
		return pr, err
	}
	shapes, err := probe.Run(ctx, send, postID)
	for _, s := range shapes {
		say("ok   %s: %s is told selectionSetGraphQL %s, selectionSetList %s", s.Name, s.Probed, s.Text, s.List)
	}
	if err != nil {
		say("FAIL %v", err)
		return err
	}
	every := 0
	for _, s := range shapes {
		if s.Text == appsync.EveryOccurrence {
			every++
		}
	}
	verdict, err := probe.Verdict(shapes)
	switch {
	case err != nil && !errors.Is(err, probe.ErrDisagree):
		return err
	case verdict == appsync.EveryOccurrence && err == nil && t.Reading == appsync.EveryOccurrence:
		say("ok   AppSync writes every occurrence's selection, as the function reads it")
	case verdict == appsync.EveryOccurrence && err == nil:
		say("ok   AppSync writes every occurrence's selection: the function reads it as %s, right and dearer; "+
			"the deployment's probe hands the function the cheaper reading (docs/deploying.md)", t.Reading)
	case t.Reading == appsync.EveryOccurrence:
		say("FAIL AppSync writes the first occurrence's selection in %d of %d shapes, and the function reads every occurrence's: "+
			"queries that select a field twice can be answered wrong; deploy with -c selectionReading=%s", len(shapes)-every, len(shapes), appsync.FirstOccurrence)
		return fmt.Errorf("the function reads every occurrence's selection, and AppSync writes the first's only")
	default:
		say("ok   AppSync writes the first occurrence's selection in %d of %d shapes: the function reads it as %s, right under it",
			len(shapes)-every, len(shapes), t.Reading)
	}
	return nil
}
