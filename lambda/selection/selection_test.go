package selection_test

import (
	"testing"

	"github.com/example/appsync-dynamo/lambda/selection"
)

func TestParse(t *testing.T) {
	text := "{\n  title\n  a: comments(limit: 2) {\n    items {\n      body\n    }\n  }\n  b: comments(limit: $n, nextToken: null) {\n    nextToken\n  }\n  ... on Post {\n    commentCount\n  }\n}"
	set, err := selection.Parse(text, "post", []byte(`{"n": 5}`), selection.EveryOccurrence)
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
	if got := comments[0].Set.Named("items")[0].Set.Fields[0].Name; got != "body" {
		t.Errorf("nested field = %q", got)
	}
}

func TestParseWithFieldAround(t *testing.T) {
	set, err := selection.Parse("{ post { title comments { items { id } } } }", "post", nil, selection.EveryOccurrence)
	if err != nil || len(set.Named("comments")) != 1 || len(set.Named("title")) != 1 {
		t.Errorf("wrapped form: %+v, %v", set, err)
	}
}

func TestParseWithAliasedFieldAround(t *testing.T) {
	set, err := selection.Parse("mine: posts(ids: $ids) { title body }", "posts", []byte(`{"ids":["p"]}`), selection.EveryOccurrence)
	if err != nil || len(set.Named("title")) != 1 || len(set.Named("body")) != 1 || len(set.Named("posts")) != 0 {
		t.Errorf("aliased wrapped form: %+v, %v", set, err)
	}
	set, err = selection.Parse("{ mine: posts(ids: $ids) { ...F } }", "posts", nil, selection.EveryOccurrence)
	if err != nil || !set.Opaque {
		t.Errorf("aliased wrapped form around a named fragment: Opaque = %v, err %v", set.Opaque, err)
	}
}

func TestOpaqueAndUnknown(t *testing.T) {
	set, err := selection.Parse("{\n  id\n  ...PostFields\n}", "post", nil, selection.EveryOccurrence)
	if err != nil || !set.Opaque {
		t.Errorf("named fragment spread: Opaque = %v, err %v", set.Opaque, err)
	}
	set, err = selection.Parse("{ comments(limit: $missing) { nextToken } }", "post", []byte(`{}`), selection.EveryOccurrence)
	if err != nil || !set.Named("comments")[0].Unknown {
		t.Errorf("missing variable not Unknown: %+v, %v", set, err)
	}
	if _, err := selection.Parse("{ comments(limit: ", "post", nil, selection.EveryOccurrence); err == nil {
		t.Error("unparsable text parsed")
	}
}

// Text of several occurrences reads back as the union of their selections,
// with their arguments, variables, aliases and fragments.
func TestTextMergesOccurrences(t *testing.T) {
	text := `{ a: comments(limit: $n) { items { id ...F ... on Comment { body } } } b: comments(limit: 2) { nextToken items { author { name } } } }`
	set, err := selection.Parse(text, "post", []byte(`{"n": 3}`), selection.EveryOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	merged := selection.Text(set.Named("comments")...)
	back, err := selection.Parse(merged, "comments", []byte(`{"n": 3}`), selection.EveryOccurrence)
	if err != nil {
		t.Fatalf("Parse(%q): %v", merged, err)
	}
	items := back.Named("items")
	if len(items) != 2 || len(back.Named("nextToken")) != 1 {
		t.Fatalf("Text = %q, read back as %+v", merged, back)
	}
	if !items[0].Set.Opaque || len(items[0].Set.Named("body")) != 1 || len(items[1].Set.Named("author")) != 1 {
		t.Errorf("Text = %q lost the fragment or a field", merged)
	}
	if got := selection.Text(back.Named("nextToken")...); got != "" {
		t.Errorf("Text of a leaf = %q, want empty", got)
	}
	inner, err := selection.Parse(selection.Text(items...), "items", nil, selection.EveryOccurrence)
	if err != nil || len(inner.Named("id")) != 1 || len(inner.Named("author")) != 1 || !inner.Opaque {
		t.Errorf("nested Text read back as %+v, %v", inner, err)
	}
}

// Under the first-occurrence reading no level is exact: another occurrence
// of the field may select more anywhere below it.
func TestFirstOccurrenceIsPartialAtEveryLevel(t *testing.T) {
	text := "{ title comments(limit: 2) { items { body ... on Comment { author { name } } } } }"
	every, err := selection.Parse(text, "post", nil, selection.EveryOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	first, err := selection.Parse(text, "post", nil, selection.FirstOccurrence)
	if err != nil {
		t.Fatal(err)
	}
	levels := func(s selection.Set) []selection.Set {
		items := s.Named("comments")[0].Set.Named("items")[0].Set
		return []selection.Set{s, s.Named("comments")[0].Set, items, items.Named("author")[0].Set}
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
	for _, r := range []selection.Reading{selection.FirstOccurrence, selection.EveryOccurrence} {
		if back, err := selection.ParseReading(r.String()); err != nil || back != r {
			t.Errorf("ParseReading(%q) = %v, %v", r.String(), back, err)
		}
	}
	if r, err := selection.ParseReading(""); err != nil || r != selection.FirstOccurrence {
		t.Errorf(`ParseReading("") = %v, %v; want the first-occurrence reading`, r, err)
	}
	if _, err := selection.ParseReading("every"); err == nil {
		t.Error(`ParseReading("every") accepted`)
	}
}
