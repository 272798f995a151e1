// Package appsync holds what AppSync sends a direct Lambda resolver: the
// event (one, or a batch), the caller's identity, the reply for a batch and
// the selection the event carries (Selection). Fields no resolver reads,
// such as the request headers, stay raw JSON.
package appsync

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/formatter"
	"github.com/vektah/gqlparser/v2/parser"
)

// Event is one direct Lambda resolver invocation for one field of one parent.
type Event struct {
	// Arguments are the field's GraphQL arguments, variables already resolved.
	Arguments json.RawMessage `json:"arguments"`
	// Identity is the caller, nil for API-key requests. The events of a
	// batch may share one Identity: it is read, never changed.
	Identity *Identity `json:"identity"`
	// Source is the parent's whole resolved object (null on root fields),
	// including keys the schema does not declare.
	Source json.RawMessage `json:"source"`
	// Request carries the HTTP request's headers and domain name, undecoded.
	Request json.RawMessage `json:"request,omitempty"`
	Prev    json.RawMessage `json:"prev,omitempty"`
	Stash   json.RawMessage `json:"stash,omitempty"`
	Info    Info            `json:"info"`
}

// Info describes the field being resolved.
type Info struct {
	FieldName      string `json:"fieldName"`
	ParentTypeName string `json:"parentTypeName"`
	// SelectionSetList lists the selected sub-fields as slash-joined paths
	// ("comments/author/name"), aliases for names, fragments expanded: a JSON
	// array kept undecoded. The resolvers read SelectionSetGraphQL instead.
	SelectionSetList json.RawMessage `json:"selectionSetList"`
	// SelectionSetGraphQL is the sub-selection as GraphQL text, with aliases
	// and arguments, and named fragment spreads left unexpanded.
	SelectionSetGraphQL string          `json:"selectionSetGraphQL"`
	Variables           json.RawMessage `json:"variables,omitempty"`
}

// Field returns "ParentType.field", the key resolvers are routed on.
func (i *Info) Field() string { return i.ParentTypeName + "." + i.FieldName }

// ErrMalformed is returned by Decode for a payload that is neither an event
// nor an array of events.
var ErrMalformed = errors.New("malformed AppSync event")

// Decode parses a Lambda payload with encoding/json: one event, or a JSON
// array of them (batch). A payload that is neither is ErrMalformed. It is the
// reference lambda/internal/eventjson.Decode is fuzzed against.
func Decode(payload []byte) (events []Event, batch bool, err error) {
	trimmed := bytes.TrimLeft(payload, " \t\r\n")
	if len(trimmed) == 0 {
		return nil, false, ErrMalformed
	}
	if trimmed[0] == '[' {
		if err := json.Unmarshal(trimmed, &events); err != nil {
			return nil, true, errors.Join(ErrMalformed, err)
		}
		return events, true, nil
	}
	events = make([]Event, 1)
	if err := json.Unmarshal(trimmed, &events[0]); err != nil {
		return nil, false, errors.Join(ErrMalformed, err)
	}
	return events, false, nil
}

// BatchItem is one element of the reply to a batch: AppSync turns an item
// with an ErrorMessage into a GraphQL error for that element only.
type BatchItem struct {
	Data         any    `json:"data"`
	ErrorMessage string `json:"errorMessage,omitempty"`
	ErrorType    string `json:"errorType,omitempty"`
}

// Identity is the caller as AppSync describes it; which fields are set
// depends on the authorization mode (user pools, OIDC, IAM, a Lambda
// authorizer). API-key requests have no identity at all.
type Identity struct {
	Sub                 string          `json:"sub,omitempty"`
	Issuer              string          `json:"issuer,omitempty"`
	Username            string          `json:"username,omitempty"`
	Claims              json.RawMessage `json:"claims,omitempty"`
	SourceIP            []string        `json:"sourceIp,omitempty"`
	DefaultAuthStrategy string          `json:"defaultAuthStrategy,omitempty"`
	Groups              []string        `json:"groups,omitempty"`

	AccountID         string `json:"accountId,omitempty"`
	UserArn           string `json:"userArn,omitempty"`
	CognitoIdentityID string `json:"cognitoIdentityId,omitempty"`

	ResolverContext map[string]string `json:"resolverContext,omitempty"`
}

// UserID returns the application user the caller acts as: the token's sub
// for Cognito and OIDC, resolverContext.userId for a Lambda authorizer, and
// "" for everyone else (API key, IAM without a user).
func (id *Identity) UserID() string {
	switch {
	case id == nil:
		return ""
	case id.Sub != "":
		return id.Sub
	default:
		return id.ResolverContext["userId"]
	}
}

// The selection: what a GraphQL query selects under the field being
// resolved, read from info.selectionSetGraphQL, with the arguments of nested
// fields and their $variables resolved from info.variables.
//
// AppSync's selectionSetList has no arguments and shows aliases in place of
// names, so the arguments of a nested field (comments(limit: 5)) can only be
// read here. What this cannot know it says so: a named fragment spread
// (left unexpanded by AppSync) makes its level Opaque, an argument naming a
// variable absent from info.variables is Unknown, and under the
// FirstOccurrence reading every level is Partial. Callers must not guess in
// any of these cases.

// Reading is how AppSync writes the selection of a field a query selects
// more than once under one response key, which AWS does not document
// (docs/deploying.md#a-field-selected-twice-how-appsync-writes-its-selection).
type Reading int

const (
	// FirstOccurrence: info may hold the first occurrence's selection only,
	// so what a selection lists is a lower bound. It is the zero Reading,
	// right whichever way AppSync writes it.
	FirstOccurrence Reading = iota
	// EveryOccurrence: info holds the selections of every occurrence,
	// merged (as the local AppSync writes it by default). Only a named
	// fragment spread, whose text AppSync leaves out, hides fields.
	EveryOccurrence
)

// String returns the reading's name, as ParseReading reads it.
func (r Reading) String() string {
	if r == EveryOccurrence {
		return "every-occurrence"
	}
	return "first-occurrence"
}

// ParseReading reads a Reading's name ("first-occurrence" or
// "every-occurrence"); "" is FirstOccurrence.
func ParseReading(name string) (Reading, error) {
	switch name {
	case "", FirstOccurrence.String():
		return FirstOccurrence, nil
	case EveryOccurrence.String():
		return EveryOccurrence, nil
	}
	return FirstOccurrence, fmt.Errorf("selection reading %q: want %s or %s", name, FirstOccurrence, EveryOccurrence)
}

// Selection is the fields selected at one level.
type Selection struct {
	Fields []*Field
	// Opaque is true when a named fragment spread at this level may select
	// more fields than Fields lists.
	Opaque bool
	// Partial is true at every level of a selection read as
	// FirstOccurrence: another occurrence of the field, or of any field
	// above or below this level, may select more than Fields lists.
	Partial bool
}

// Exact reports whether Fields is everything the query selects at this
// level (under its aliases): only then may a caller read or answer less for
// what it does not list.
func (s Selection) Exact() bool { return !s.Opaque && !s.Partial }

// Field is one selected field.
type Field struct {
	Alias string // the response key: the alias, or the name
	Name  string
	Args  map[string]any // int64, float64, string, bool, nil, []any, map[string]any
	// Unknown is true when an argument names a variable that info.variables
	// does not hold, so the argument's value cannot be known.
	Unknown   bool
	Selection Selection

	sel ast.SelectionSet // as parsed, for SelectionText
}

// Named returns the fields selected under the name (whatever their aliases).
func (s Selection) Named(name string) []*Field {
	var out []*Field
	for _, f := range s.Fields {
		if f.Name == name {
			out = append(out, f)
		}
	}
	return out
}

// ParseSelection reads the selection of fieldName from its
// selectionSetGraphQL text under the reading r, with or without the field
// itself around it ("{ id }", "post { id }", "{ mine: posts { id } }"),
// inline fragments merged into their level. variables may be empty.
func ParseSelection(text, fieldName string, variables json.RawMessage, r Reading) (Selection, error) {
	if t := strings.TrimSpace(text); t != "" && t[0] != '{' {
		text = "{" + text + "}" // the field with its selection, unbraced
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: text})
	if err != nil {
		return Selection{}, err
	}
	var vars map[string]any
	if len(variables) > 0 {
		if err := json.Unmarshal(variables, &vars); err != nil {
			return Selection{}, err
		}
	}
	var root ast.SelectionSet
	if len(doc.Operations) > 0 {
		root = doc.Operations[0].SelectionSet
	}
	set := build(root, vars, r == FirstOccurrence)
	// The form with the field around its selection, aliased or not
	// ("mine: posts(ids: $ids) { title }"). No type of this schema has a field
	// whose only sub-field could share its name, so this is never a real
	// sub-selection.
	if len(set.Fields) == 1 && !set.Opaque && set.Fields[0].Name == fieldName &&
		(len(set.Fields[0].Selection.Fields) > 0 || set.Fields[0].Selection.Opaque) {
		return set.Fields[0].Selection, nil
	}
	return set, nil
}

func build(sel ast.SelectionSet, vars map[string]any, partial bool) Selection {
	s := Selection{Partial: partial}
	for _, item := range sel {
		switch x := item.(type) {
		case *ast.Field:
			f := &Field{Alias: x.Alias, Name: x.Name, Args: map[string]any{}, Selection: build(x.SelectionSet, vars, partial), sel: x.SelectionSet}
			if f.Alias == "" {
				f.Alias = f.Name
			}
			for _, a := range x.Arguments {
				v, known := value(a.Value, vars)
				f.Args[a.Name] = v
				f.Unknown = f.Unknown || !known
			}
			s.Fields = append(s.Fields, f)
		case *ast.InlineFragment:
			inner := build(x.SelectionSet, vars, partial)
			s.Fields = append(s.Fields, inner.Fields...)
			s.Opaque = s.Opaque || inner.Opaque
		case *ast.FragmentSpread:
			s.Opaque = true
		}
	}
	return s
}

// value converts a literal or variable; known is false for a variable that
// vars does not hold.
func value(v *ast.Value, vars map[string]any) (any, bool) {
	if v == nil {
		return nil, true
	}
	switch v.Kind {
	case ast.Variable:
		x, ok := vars[v.Raw]
		if f, isFloat := x.(float64); isFloat && f == float64(int64(f)) {
			return int64(f), ok
		}
		return x, ok
	case ast.IntValue:
		n, err := strconv.ParseInt(v.Raw, 10, 64)
		return n, err == nil
	case ast.FloatValue:
		f, err := strconv.ParseFloat(v.Raw, 64)
		return f, err == nil
	case ast.StringValue, ast.BlockValue, ast.EnumValue:
		return v.Raw, true
	case ast.BooleanValue:
		return v.Raw == "true", true
	case ast.NullValue:
		return nil, true
	case ast.ListValue:
		list := make([]any, len(v.Children))
		known := true
		for i, c := range v.Children {
			var k bool
			list[i], k = value(c.Value, vars)
			known = known && k
		}
		return list, known
	case ast.ObjectValue:
		obj := make(map[string]any, len(v.Children))
		known := true
		for _, c := range v.Children {
			var k bool
			obj[c.Name], k = value(c.Value, vars)
			known = known && k
		}
		return obj, known
	}
	return nil, false
}

// SelectionText returns the selections of fields (several occurrences of one field,
// under different aliases) as one selection set in GraphQL text, as AppSync
// writes selectionSetGraphQL: what ParseSelection reads back as the union of their
// Sets. Fragments stay as they were written and $variables as names.
func SelectionText(fields ...*Field) string {
	var merged ast.SelectionSet
	for _, f := range fields {
		merged = append(merged, f.sel...)
	}
	if len(merged) == 0 {
		return ""
	}
	var b strings.Builder
	formatter.NewFormatter(&b, formatter.WithIndent("  ")).FormatQueryDocument(&ast.QueryDocument{
		Operations: ast.OperationList{{Operation: ast.Query, SelectionSet: merged}},
	})
	return strings.TrimSuffix(strings.TrimPrefix(b.String(), "query "), "\n")
}
