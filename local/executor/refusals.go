package executor

// How a request refused before any resolver runs is answered: as AppSync
// answers it, with no errorType, its locations, and graphql-java's form of
// message ("Validation error of type WrongType: ...", the engine AppSync's
// validation errors come from: aws-appsync-community#273, #406). The text
// after the type is gqlparser's (graphql-js's wording); docs/local.md says
// which parts are documented and which are the local AppSync's guess.

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/validator/core"
)

// validationTypes are graphql-java's ValidationErrorType for each of
// gqlparser's rules.
var validationTypes = map[string]string{
	"FieldsOnCorrectType":         "FieldUndefined",
	"FragmentsOnCompositeTypes":   "InlineFragmentTypeConditionInvalid",
	"KnownArgumentNames":          "UnknownArgument",
	"KnownDirectives":             "UnknownDirective",
	"KnownFragmentNames":          "UndefinedFragment",
	"KnownRootType":               "UnknownOperation",
	"KnownTypeNames":              "UnknownType",
	"LoneAnonymousOperation":      "LoneAnonymousOperationViolation",
	"MaxIntrospectionDepth":       "MaxIntrospectionDepth",
	"NoFragmentCycles":            "FragmentCycle",
	"NoUndefinedVariables":        "UndefinedVariable",
	"NoUnusedFragments":           "UnusedFragment",
	"NoUnusedVariables":           "UnusedVariable",
	overlapping:                   "FieldsConflict",
	"PossibleFragmentSpreads":     "InvalidFragmentType",
	"ProvidedRequiredArguments":   "MissingFieldArgument",
	"ScalarLeafs":                 "SubSelectionRequired",
	"SingleFieldSubscriptions":    "SubscriptionMultipleRootFields",
	singleRootKey:                 "SubscriptionMultipleRootFields",
	"UniqueArgumentNames":         "DuplicateArgumentNames",
	"UniqueDirectivesPerLocation": "DuplicateDirectiveName",
	"UniqueFragmentNames":         "DuplicateFragmentName",
	"UniqueInputFieldNames":       "WrongType",
	"UniqueOperationNames":        "DuplicateOperationName",
	"UniqueVariableNames":         "DuplicateVariableName",
	"ValuesOfCorrectType":         "WrongType",
	"VariablesAreInputTypes":      "NonInputTypeOnVariable",
	"VariablesInAllowedPosition":  "VariableTypeMismatch",
	literalTypes:                  "WrongType",
}

// refusal is err, a parse or validation error, as AppSync reports it.
func refusal(err *gqlerror.Error) Error {
	msg := err.Message
	if t, ok := validationTypes[err.Rule]; ok {
		msg = fmt.Sprintf("Validation error of type %s: %s", t, msg)
	}
	e := Error{Message: msg}
	for _, l := range err.Locations {
		e.Locations = append(e.Locations, Location{l.Line, l.Column})
	}
	return e
}

// literalTypes is the rule of what gqlparser's ValuesOfCorrectType lets
// through: an Int written in the document is a 32-bit signed integer, and
// an object is written only for an input object (or one of AppSync's
// scalars, which take any value).
const literalTypes = "LiteralTypes"

func checkLiteralTypes(observers *core.Events, addError core.AddErrFunc) {
	observers.OnValue(func(_ *core.Walker, v *ast.Value) {
		if v.Definition == nil || v.ExpectedType == nil {
			return
		}
		switch {
		case v.Kind == ast.IntValue && v.Definition.Name == "Int":
			if _, err := strconv.ParseInt(v.Raw, 10, 32); err != nil {
				addError(core.Message("value 'IntValue{value=%s}' is not a valid 'Int': Expected value to be in the Integer range", v.Raw), core.At(v.Position))
			}
		case v.Kind == ast.ObjectValue && v.Definition.Kind != ast.InputObject && (builtin[v.Definition.Name] || v.Definition.Kind == ast.Enum):
			addError(core.Message(`Expected value of type "%s", found %s.`, v.ExpectedType, v), core.At(v.Position))
		case awsScalars[v.Definition.Name] != nil && v.Kind != ast.Variable && v.Kind != ast.NullValue:
			if v.Kind != ast.StringValue && v.Kind != ast.BlockValue || !awsScalars[v.Definition.Name](v.Raw) {
				addError(core.Message("argument value %s is not a valid '%s'", v, v.Definition.Name), core.At(v.Position))
			}
		}
	})
}

// singleRootKey is the rule of what gqlparser's SingleFieldSubscriptions
// lets through: it counts a subscription's root fields by name, and
// GraphQL by response key (CollectFields), so that one field under two
// aliases is two root fields, refused as any two are.
const singleRootKey = "SingleRootKey"

func checkSingleRootKey(observers *core.Events, addError core.AddErrFunc) {
	observers.OnOperation(func(_ *core.Walker, op *ast.OperationDefinition) {
		if op.Operation != ast.Subscription {
			return
		}
		var keys, names []string
		var second *ast.Position
		spread := map[string]bool{}
		var walk func(ast.SelectionSet)
		walk = func(set ast.SelectionSet) {
			for _, sel := range set {
				switch sel := sel.(type) {
				case *ast.Field:
					if key := cmp.Or(sel.Alias, sel.Name); !slices.Contains(keys, key) {
						keys = append(keys, key)
						if len(keys) == 2 {
							second = sel.Position
						}
					}
					if !slices.Contains(names, sel.Name) {
						names = append(names, sel.Name)
					}
				case *ast.InlineFragment:
					walk(sel.SelectionSet)
				case *ast.FragmentSpread:
					if sel.Definition != nil && !spread[sel.Name] {
						spread[sel.Name] = true
						walk(sel.Definition.SelectionSet)
					}
				}
			}
		}
		walk(op.SelectionSet)
		if len(keys) > 1 && len(names) == 1 { // two names: gqlparser's rule says so
			name := "Anonymous Subscription"
			if op.Name != "" {
				name = "Subscription " + strconv.Quote(op.Name)
			}
			addError(core.Message("%s must select only one top level field.", name), core.At(second))
		}
	})
}
