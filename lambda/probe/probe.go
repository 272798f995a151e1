// Package probe tells how an AppSync API writes the selection of a field a
// query selects twice (appsync.Reading) by asking it: the resolver of the
// field the Header names fails with ErrorType and, as its message, the
// Selection AppSync gave it (docs/deploying.md).
package probe

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/example/appsync-dynamo/lambda/appsync"
)

// Header is the request header that asks the resolver of the field it names
// ("Query.post", "Post.comments") to fail with ErrorType and its Selection
// in JSON as the message. It shows the caller nothing but what its own query
// selects.
const (
	Header    = "x-selection-probe"
	ErrorType = "SelectionProbe"
)

// Selection is the message of a probe's error: what AppSync told the
// resolver.
type Selection struct {
	SelectionSetGraphQL string   `json:"selectionSetGraphQL"`
	SelectionSetList    []string `json:"selectionSetList"`
}

// Response is a GraphQL response, as much of it as the probes read.
type Response struct {
	Data   map[string]any `json:"data"`
	Errors []Error        `json:"errors"`
}

// Error is one of a GraphQL response's errors.
type Error struct {
	Message   string `json:"message"`
	ErrorType string `json:"errorType"`
	Path      []any  `json:"path"`
}

// Send sends one GraphQL request with the given headers (name, value, ...)
// and returns its response: signed with IAM by the deployment's function,
// with an API key or a token by make smoke.
type Send func(ctx context.Context, query string, vars map[string]any, headers ...string) (Response, error)

// A Shape is one way of selecting a field twice, and what AppSync wrote for
// it: Text the reading of selectionSetGraphQL (what the function and
// child.js read), List that of selectionSetList.
type Shape struct {
	Name, Probed string
	Text, List   appsync.Reading
	Seen         Selection
}

// A shape selects Probed twice; only the second occurrence selects the
// added field (its name in the text, its path in the list).
type shape struct {
	name, query, probed  string
	addedText, addedPath string
}

// shapes are the ways of merging a field the function's reading must hold
// for: a root field and a field of an object, each selected again in a named
// fragment, in an inline fragment and directly.
var shapes = []shape{
	{"a root field again in a fragment on Query", `query($p: ID!) { post(id: $p) { id } ...Q } fragment Q on Query { post(id: $p) { title } }`, "Query.post", "title", "title"},
	{"a root field again in an inline fragment", `query($p: ID!) { post(id: $p) { id } ... on Query { post(id: $p) { title } } }`, "Query.post", "title", "title"},
	{"a root field written twice", `query($p: ID!) { post(id: $p) { id } post(id: $p) { title } }`, "Query.post", "title", "title"},
	{"an object's field again in a named fragment", `query($p: ID!) { post(id: $p) { comments { items { id } } ...C } } fragment C on Post { comments { items { body } } }`, "Post.comments", "body", "items/body"},
	{"an object's field again in an inline fragment", `query($p: ID!) { post(id: $p) { comments { items { id } } ... on Post { comments { items { body } } } } }`, "Post.comments", "body", "items/body"},
	{"an object's field written twice", `query($p: ID!) { post(id: $p) { comments { items { id } } comments { items { body } } } }`, "Post.comments", "body", "items/body"},
}

// Fields are the fields the probes read, as Type.field: what a caller that
// runs them must be allowed (the deployment's function's IAM policy).
func Fields() []string {
	return []string{"Query.post", "Post.id", "Post.title", "Post.comments", "CommentConnection.items", "Comment.id", "Comment.body"}
}

// Run sends every probe about the published post postID and returns what
// AppSync wrote for each shape, in order, or the first probe's error.
func Run(ctx context.Context, send Send, postID string) ([]Shape, error) {
	var out []Shape
	for _, s := range shapes {
		r, err := send(ctx, s.query, map[string]any{"p": postID}, Header, s.probed)
		if err != nil {
			return out, fmt.Errorf("the probe of %s: %w", s.name, err)
		}
		got, err := read(r, s)
		if err != nil {
			return out, fmt.Errorf("the probe of %s: %w", s.name, err)
		}
		out = append(out, got)
	}
	return out, nil
}

// read reads a probe's answer.
func read(r Response, s shape) (Shape, error) {
	for _, e := range r.Errors {
		if e.ErrorType != ErrorType {
			continue
		}
		var seen Selection
		if err := json.Unmarshal([]byte(e.Message), &seen); err != nil {
			return Shape{}, fmt.Errorf("the probe's answer %q is not its selection: %v", e.Message, err)
		}
		of := func(added bool) appsync.Reading {
			if added {
				return appsync.EveryOccurrence
			}
			return appsync.FirstOccurrence
		}
		return Shape{Name: s.name, Probed: s.probed, Seen: seen,
			Text: of(strings.Contains(seen.SelectionSetGraphQL, s.addedText)),
			List: of(slices.Contains(seen.SelectionSetList, s.addedPath))}, nil
	}
	b, _ := json.Marshal(r)
	return Shape{}, fmt.Errorf("%s did not answer the probe (%s): %s", s.probed, Header, b)
}

// ErrDisagree is Verdict's error when the shapes show different readings.
var ErrDisagree = errors.New("AppSync writes some merged fields' selections whole and others in part")

// Verdict returns the reading every shape's text shows (what the function
// reads), or ErrDisagree, naming each shape's, when they differ. Under
// either reading's name the function is right only where every shape
// agrees with it; first-occurrence is right under both.
func Verdict(shapes []Shape) (appsync.Reading, error) {
	if len(shapes) == 0 {
		return appsync.FirstOccurrence, errors.New("no probe was run")
	}
	for _, s := range shapes {
		if s.Text != shapes[0].Text {
			return appsync.FirstOccurrence, fmt.Errorf("%w (%s)", ErrDisagree, strings.Join(eachOf(shapes), "; "))
		}
	}
	return shapes[0].Text, nil
}

func eachOf(shapes []Shape) []string {
	var each []string
	for _, s := range shapes {
		each = append(each, s.Name+": "+s.Text.String())
	}
	return each
}
