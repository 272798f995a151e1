package probe_test

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/appsyncjs"
	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/probe"
)

// fakeAppSync answers a probe as an AppSync writing selections under r would:
// the probed field's selection is the first occurrence's, or both's.
func fakeAppSync(r func(shape int) appsync.Reading) probe.Send {
	n := 0
	return func(_ context.Context, query string, _ map[string]any, headers ...string) (probe.Response, error) {
		if len(headers) != 2 || headers[0] != probe.Header {
			return probe.Response{}, errors.New("no probe header")
		}
		defer func() { n++ }()
		seen := probe.Selection{SelectionSetGraphQL: "{ id }", SelectionSetList: []string{"id"}}
		if headers[1] == "Post.comments" {
			seen = probe.Selection{SelectionSetGraphQL: "{ items { id } }", SelectionSetList: []string{"items", "items/id"}}
		}
		if r(n) == appsync.EveryOccurrence {
			if headers[1] == "Query.post" {
				seen.SelectionSetGraphQL, seen.SelectionSetList = "{ id title }", []string{"id", "title"}
			} else {
				seen.SelectionSetGraphQL, seen.SelectionSetList = "{ items { id body } }", []string{"items", "items/id", "items/body"}
			}
		}
		msg, _ := json.Marshal(seen)
		return probe.Response{Errors: []probe.Error{{ErrorType: probe.ErrorType, Message: string(msg)}}}, nil
	}
}

func TestTheVerdictIsTheReadingEveryShapeShows(t *testing.T) {
	for _, want := range []appsync.Reading{appsync.FirstOccurrence, appsync.EveryOccurrence} {
		shapes, err := probe.Run(t.Context(), fakeAppSync(func(int) appsync.Reading { return want }), "p1")
		if err != nil || len(shapes) != 6 {
			t.Fatalf("%v: %d shapes, %v", want, len(shapes), err)
		}
		for _, s := range shapes {
			if s.Text != want || s.List != want {
				t.Errorf("%v: %s read as %v and %v", want, s.Name, s.Text, s.List)
			}
		}
		if got, err := probe.Verdict(shapes); got != want || err != nil {
			t.Errorf("verdict %v, %v; want %v", got, err, want)
		}
	}
}

// Shapes that disagree are no verdict: the deployment fails, naming each.
func TestShapesThatDisagreeAreNoVerdict(t *testing.T) {
	shapes, err := probe.Run(t.Context(), fakeAppSync(func(n int) appsync.Reading { return appsync.Reading(min(n/3, 1)) }), "p1")
	if err != nil {
		t.Fatal(err)
	}
	got, err := probe.Verdict(shapes)
	if !errors.Is(err, probe.ErrDisagree) || got != appsync.FirstOccurrence ||
		!strings.Contains(err.Error(), "a root field written twice: first-occurrence") || !strings.Contains(err.Error(), "an object's field written twice: every-occurrence") {
		t.Errorf("verdict %v, %v", got, err)
	}
	if _, err := probe.Verdict(nil); err == nil {
		t.Error("no shapes: a verdict")
	}
}

// A field that does not answer the probe (an API without the probe, a
// resolver that failed) is an error naming the field, not a reading.
func TestAFieldThatDoesNotAnswerIsAnError(t *testing.T) {
	send := func(context.Context, string, map[string]any, ...string) (probe.Response, error) {
		return probe.Response{Errors: []probe.Error{{ErrorType: "Unauthorized", Message: "Not Authorized to access post on type Query"}}}, nil
	}
	if _, err := probe.Run(t.Context(), send, "p1"); err == nil || !strings.Contains(err.Error(), "Query.post did not answer the probe") {
		t.Errorf("err %v", err)
	}
}

// Decide writes its post, probes, deletes the post whatever happened, and
// fails where the function would be wrong: shapes that disagree (unless
// first-occurrence is pinned, right under both), every-occurrence pinned
// where AppSync writes less.
func TestDecide(t *testing.T) {
	every := func(int) appsync.Reading { return appsync.EveryOccurrence }
	first := func(int) appsync.Reading { return appsync.FirstOccurrence }
	mixed := func(n int) appsync.Reading { return appsync.Reading(n % 2) }
	for _, c := range []struct {
		name    string
		appsync func(int) appsync.Reading
		pinned  string
		want    appsync.Reading
		fails   string
	}{
		{"every", every, "", appsync.EveryOccurrence, ""},
		{"first", first, "", appsync.FirstOccurrence, ""},
		{"mixed", mixed, "", appsync.FirstOccurrence, "some merged fields"},
		{"mixed, first pinned", mixed, "first-occurrence", appsync.FirstOccurrence, ""},
		{"first, every pinned", first, "every-occurrence", appsync.FirstOccurrence, "pinned to every-occurrence"},
		{"every, every pinned", every, "every-occurrence", appsync.EveryOccurrence, ""},
	} {
		var steps []string
		put := func(context.Context) error { steps = append(steps, "put"); return nil }
		remove := func(context.Context) error { steps = append(steps, "remove"); return nil }
		got, shapes, err := probe.Decide(t.Context(), fakeAppSync(c.appsync), put, remove, c.pinned)
		if got != c.want || (err != nil) != (c.fails != "") || err != nil && !strings.Contains(err.Error(), c.fails) ||
			len(shapes) != 6 || strings.Join(steps, ",") != "put,remove" {
			t.Errorf("%s: %v, %v after %v with %d shapes; want %v, failing with %q", c.name, got, err, steps, len(shapes), c.want, c.fails)
		}
	}
	remove := func(context.Context) error { return errors.New("throttled") }
	put := func(context.Context) error { return nil }
	if _, _, err := probe.Decide(t.Context(), fakeAppSync(every), put, remove, ""); err == nil || !strings.Contains(err.Error(), "deleting the probes' post") {
		t.Errorf("a post not deleted: %v", err)
	}
}

// child.js answers the selection probe as the Lambda does for root fields:
// on the same header, with the same errorType (make smoke reads both).
func TestTheProbeIsTheLambdas(t *testing.T) {
	header := regexp.MustCompile(`(?m)^const PROBE_HEADER = '([^']+)';$`).FindStringSubmatch(appsyncjs.Child)
	if header == nil || header[1] != probe.Header {
		t.Errorf("child.js's PROBE_HEADER %q, want probe.Header %q", header, probe.Header)
	}
	if !regexp.MustCompile(`'` + probe.ErrorType + `',\s*\);`).MatchString(appsyncjs.Child) {
		t.Errorf("child.js does not fail the probe with errorType %q", probe.ErrorType)
	}
}
