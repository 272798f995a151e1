package appsync_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

func TestParse(t *testing.T) {
	text := "{\n  title\n  a: comments(limit: 2) {\n    items {\n      body\n    }\n  }\n  b: comments(limit: $n, nextToken: null) {\n    nextToken\n  }\n  ... on Post {\n    commentCount\n  }\n}"
	set, err := appsync.ParseSelection(text, "post", []byte(`{"n": 5}`), appsync.EveryOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	if set.Opaque {
		t.Error("no named fragment, but Opaque")
	}
	comments := set.Named("comments")
	if len(comments) != 2 || comments[0].Alias != "a" || comments[1].Alias != "b" {
		t.Fatalf("comments = %+v", comments)
	}
	if comments[0].Args["limit"] != int64(2) || comments[1].Args["limit"] != int64(5) || comments[1].Args["nextToken"] != nil {
		t.Errorf("args = %v, %v", comments[0].Args, comments[1].Args)
	}
	if comments[1].Unknown {
		t.Error("$n is in variables, but Unknown")
	}
	if len(set.Named("commentCount")) != 1 {
		t.Error("inline fragment fields are not merged")
	}
	if got := comments[0].Selection.Named("items")[0].Selection.Fields[0].Name; got != "body" {
		t.Errorf("nested field = %q", got)
	}
}

func TestParseWithFieldAround(t *testing.T) {
	set, err := appsync.ParseSelection("{ post { title comments { items { id } } } }", "post", nil, appsync.EveryOccurrence)
	if err != nil || len(set.Named("comments")) != 1 || len(set.Named("title")) != 1 {
		t.Errorf("wrapped form: %+v, %v", set, err)
	}
}

func TestParseWithAliasedFieldAround(t *testing.T) {
	set, err := appsync.ParseSelection("mine: posts(ids: $ids) { title body }", "posts", []byte(`{"ids":["p"]}`), appsync.EveryOccurrence)
	if err != nil || len(set.Named("title")) != 1 || len(set.Named("body")) != 1 || len(set.Named("posts")) != 0 {
		t.Errorf("aliased wrapped form: %+v, %v", set, err)
	}
	set, err = appsync.ParseSelection("{ mine: posts(ids: $ids) { ...F } }", "posts", nil, appsync.EveryOccurrence)
	if err != nil || !set.Opaque {
		t.Errorf("aliased wrapped form around a named fragment: Opaque = %v, err %v", set.Opaque, err)
	}
}

func TestOpaqueAndUnknown(t *testing.T) {
	set, err := appsync.ParseSelection("{\n  id\n  ...PostFields\n}", "post", nil, appsync.EveryOccurrence)
	if err != nil || !set.Opaque {
		t.Errorf("named fragment spread: Opaque = %v, err %v", set.Opaque, err)
	}
	set, err = appsync.ParseSelection("{ comments(limit: $missing) { nextToken } }", "post", []byte(`{}`), appsync.EveryOccurrence)
	if err != nil || !set.Named("comments")[0].Unknown {
		t.Errorf("missing variable not Unknown: %+v, %v", set, err)
	}
	if _, err := appsync.ParseSelection("{ comments(limit: ", "post", nil, appsync.EveryOccurrence); err == nil {
		t.Error("unparsable text parsed")
	}
}

// SelectionText of several occurrences reads back as the union of their selections,
// with their arguments, variables, aliases and fragments.
func TestTextMergesOccurrences(t *testing.T) {
	text := `{ a: comments(limit: $n) { items { id ...F ... on Comment { body } } } b: comments(limit: 2) { nextToken items { author { name } } } }`
	set, err := appsync.ParseSelection(text, "post", []byte(`{"n": 3}`), appsync.EveryOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	merged := appsync.SelectionText(set.Named("comments")...)
	back, err := appsync.ParseSelection(merged, "comments", []byte(`{"n": 3}`), appsync.EveryOccurrence)
	if err != nil {
		t.Fatalf("ParseSelection(%q): %v", merged, err)
	}
	items := back.Named("items")
	if len(items) != 2 || len(back.Named("nextToken")) != 1 {
		t.Fatalf("SelectionText = %q, read back as %+v", merged, back)
	}
	if !items[0].Selection.Opaque || len(items[0].Selection.Named("body")) != 1 || len(items[1].Selection.Named("author")) != 1 {
		t.Errorf("SelectionText = %q lost the fragment or a field", merged)
	}
	if got := appsync.SelectionText(back.Named("nextToken")...); got != "" {
		t.Errorf("SelectionText of a leaf = %q, want empty", got)
	}
	inner, err := appsync.ParseSelection(appsync.SelectionText(items...), "items", nil, appsync.EveryOccurrence)
	if err != nil || len(inner.Named("id")) != 1 || len(inner.Named("author")) != 1 || !inner.Opaque {
		t.Errorf("nested SelectionText read back as %+v, %v", inner, err)
	}
}

// Under the first-occurrence reading no level is exact: another occurrence
// of the field may select more anywhere below it.
func TestFirstOccurrenceIsPartialAtEveryLevel(t *testing.T) {
	text := "{ title comments(limit: 2) { items { body ... on Comment { author { name } } } } }"
	every, err := appsync.ParseSelection(text, "post", nil, appsync.EveryOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	first, err := appsync.ParseSelection(text, "post", nil, appsync.FirstOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	levels := func(s appsync.Selection) []appsync.Selection {
		items := s.Named("comments")[0].Selection.Named("items")[0].Selection
		return []appsync.Selection{s, s.Named("comments")[0].Selection, items, items.Named("author")[0].Selection}
	}
	for i, l := range levels(every) {
		if !l.Exact() {
			t.Errorf("every-occurrence level %d not exact: %+v", i, l)
		}
	}
	for i, l := range levels(first) {
		if l.Exact() || !l.Partial || l.Opaque {
			t.Errorf("first-occurrence level %d: Exact %v, Partial %v, Opaque %v", i, l.Exact(), l.Partial, l.Opaque)
		}
	}
	if len(first.Named("title")) != 1 || first.Named("comments")[0].Args["limit"] != int64(2) {
		t.Errorf("first-occurrence lost what it shows: %+v", first)
	}
}

func TestParseReading(t *testing.T) {
	for _, r := range []appsync.Reading{appsync.FirstOccurrence, appsync.EveryOccurrence} {
		if back, err := appsync.ParseReading(r.String()); err != nil || back != r {
			t.Errorf("ParseReading(%q) = %v, %v", r.String(), back, err)
		}
	}
	if r, err := appsync.ParseReading(""); err != nil || r != appsync.FirstOccurrence {
		t.Errorf(`ParseReading("") = %v, %v; want the first-occurrence reading`, r, err)
	}
	if _, err := appsync.ParseReading("every"); err == nil {
		t.Error(`ParseReading("every") accepted`)
	}
}
