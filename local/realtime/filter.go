package realtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// AppSync's enhanced subscription filters (extensions.setSubscriptionFilter)
// and invalidation filters (extensions.setSubscriptionInvalidationFilter),
// as a subscription resolver's response handler gives them: a filterJsonObject,
//
//	{"filterGroup": [{"filters": [{"fieldName": "postId", "operator": "eq", "value": "p1"}, ...]}, ...]}
//
// matches a payload when one of its filters does (OR), and a filter when
// each of its conditions does (AND). The limits are AppSync's: they are
// checked when the subscription starts, which then fails.
const (
	MaxFilters           = 10  // filters in a filterGroup
	MaxConditions        = 5   // conditions in a filter
	MaxPathDepth         = 5   // levels of a dotted fieldName
	MaxPathLength        = 256 // characters of a fieldName
	MaxInValues          = 5   // values of in and notIn
	MaxContainsAnyValues = 20  // values of containsAny
)

// Filter is a parsed filterJsonObject.
type Filter struct {
	filters [][]condition
}

type condition struct {
	path  []string
	op    string
	value any
}

// ParseFilter reads a filterJsonObject (JSON-shaped: what encoding/json
// produces), refusing one past AppSync's limits or with an operator or a
// value AppSync does not take.
func ParseFilter(raw any) (*Filter, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var doc struct {
		FilterGroup []struct {
			Filters []struct {
				FieldName string `json:"fieldName"`
				Operator  string `json:"operator"`
				Value     any    `json:"value"`
			} `json:"filters"`
		} `json:"filterGroup"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("a filter is {\"filterGroup\": [{\"filters\": [...]}]}: %v", err)
	}
	switch n := len(doc.FilterGroup); {
	case n == 0:
		return nil, fmt.Errorf("a filter's filterGroup holds at least one filter")
	case n > MaxFilters:
		return nil, fmt.Errorf("Filters exceed maximum filter groups limit %d for subscription (%d)", MaxFilters, n)
	}
	f := &Filter{}
	for _, g := range doc.FilterGroup {
		if n := len(g.Filters); n == 0 || n > MaxConditions {
			return nil, fmt.Errorf("Filters exceed maximum attributes limit %d for subscription (%d)", MaxConditions, n)
		}
		var conds []condition
		for _, c := range g.Filters {
			cond, err := parseCondition(c.FieldName, c.Operator, c.Value)
			if err != nil {
				return nil, err
			}
			conds = append(conds, cond)
		}
		f.filters = append(f.filters, conds)
	}
	return f, nil
}

func parseCondition(field, op string, value any) (condition, error) {
	path := strings.Split(field, ".")
	switch {
	case field == "" || slices.Contains(path, ""):
		return condition{}, fmt.Errorf("filter field name %q is not a field path", field)
	case len(field) > MaxPathLength:
		return condition{}, fmt.Errorf("filter field name is %d characters: at most %d", len(field), MaxPathLength)
	case len(path) > MaxPathDepth:
		return condition{}, fmt.Errorf("filter field name %q is %d levels deep: at most %d", field, len(path), MaxPathDepth)
	}
	list, isList := value.([]any)
	scalar := !isList && value != nil
	if _, isObject := value.(map[string]any); isObject {
		scalar = false
	}
	ok := false
	switch op {
	case "eq", "ne":
		ok = scalar
	case "le", "lt", "ge", "gt", "contains", "notContains":
		ok = isNumber(value) || isString(value)
	case "beginsWith":
		ok = isString(value)
	case "in", "notIn":
		ok = isList && len(list) > 0 && len(list) <= MaxInValues && allScalar(list)
	case "containsAny":
		ok = isList && len(list) > 0 && len(list) <= MaxContainsAnyValues && allScalar(list)
	case "between":
		ok = isList && len(list) == 2 && (isNumber(list[0]) && isNumber(list[1]) || isString(list[0]) && isString(list[1]))
	default:
		return condition{}, fmt.Errorf("filter operator %q is not one of eq, ne, le, lt, ge, gt, contains, notContains, beginsWith, in, notIn, between, containsAny", op)
	}
	if !ok {
		return condition{}, fmt.Errorf("filter %s on %q: value %s is not what %s takes%s", op, field, show(value), op, limitOf(op))
	}
	return condition{path: path, op: op, value: value}, nil
}

func limitOf(op string) string {
	switch op {
	case "in", "notIn":
		return fmt.Sprintf(" (a list of 1 to %d numbers, strings or booleans)", MaxInValues)
	case "containsAny":
		return fmt.Sprintf(" (a list of 1 to %d numbers, strings or booleans)", MaxContainsAnyValues)
	case "between":
		return " (two numbers or two strings)"
	}
	return ""
}

func show(v any) string { b, _ := json.Marshal(v); return string(b) }

// Match reports whether the payload (a published object, JSON-shaped)
// passes the filter. A condition on a field the payload does not hold, or
// holds as null, is false, whatever its operator.
func (f *Filter) Match(payload map[string]any) bool {
	return slices.ContainsFunc(f.filters, func(conds []condition) bool {
		for _, c := range conds {
			if !c.holds(payload) {
				return false
			}
		}
		return true
	})
}

func (c condition) holds(payload map[string]any) bool {
	var v any = payload
	for _, name := range c.path {
		obj, ok := v.(map[string]any)
		if !ok {
			return false
		}
		v = obj[name]
	}
	if v == nil {
		return false
	}
	switch c.op {
	case "eq":
		return equal(v, c.value)
	case "ne":
		return !equal(v, c.value)
	case "le", "lt", "ge", "gt":
		n, ok := compare(v, c.value)
		return ok && map[string]bool{"le": n <= 0, "lt": n < 0, "ge": n >= 0, "gt": n > 0}[c.op]
	case "contains":
		return contains(v, c.value)
	case "notContains":
		return !contains(v, c.value)
	case "beginsWith":
		s, ok := v.(string)
		return ok && strings.HasPrefix(s, c.value.(string))
	case "in":
		return slices.ContainsFunc(c.value.([]any), func(w any) bool { return equal(v, w) })
	case "notIn":
		return !slices.ContainsFunc(c.value.([]any), func(w any) bool { return equal(v, w) })
	case "between":
		bounds := c.value.([]any)
		lo, okLo := compare(v, bounds[0])
		hi, okHi := compare(v, bounds[1])
		return okLo && okHi && lo >= 0 && hi <= 0
	case "containsAny":
		return slices.ContainsFunc(c.value.([]any), func(w any) bool { return contains(v, w) })
	}
	return false
}

// contains is a string's substring or a list's element.
func contains(v, w any) bool {
	switch v := v.(type) {
	case string:
		s, ok := w.(string)
		return ok && strings.Contains(v, s)
	case []any:
		return slices.ContainsFunc(v, func(e any) bool { return equal(e, w) })
	}
	return false
}

// equal compares two JSON scalars: numbers by value, strings and booleans
// exactly, never across kinds.
func equal(a, b any) bool {
	if n, ok := compare(a, b); ok {
		return n == 0
	}
	x, okA := a.(bool)
	y, okB := b.(bool)
	return okA && okB && x == y
}

// compare orders two numbers or two strings (false for anything else).
func compare(a, b any) (int, bool) {
	if x, ok := number(a); ok {
		if y, ok := number(b); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
		return 0, false
	}
	x, okA := a.(string)
	y, okB := b.(string)
	if !okA || !okB {
		return 0, false
	}
	return strings.Compare(x, y), true
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func isNumber(v any) bool { _, ok := number(v); return ok }
func isString(v any) bool { _, ok := v.(string); return ok }

func allScalar(vs []any) bool {
	return !slices.ContainsFunc(vs, func(v any) bool {
		switch v.(type) {
		case string, bool:
			return false
		}
		return !isNumber(v)
	})
}
