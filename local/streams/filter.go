package streams

import (
	"encoding/json"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// Matches returns the filter of an event source mapping with these filter
// criteria: a record is delivered when it matches one of the patterns, as
// Lambda's event filtering matches them on the record's JSON. It reads the
// part of the pattern syntax that patterns here use: nested objects, and
// arrays of the values a field may take (a string, or {"prefix": "..."}).
func Matches(patterns []map[string]any) func(events.DynamoDBEventRecord) bool {
	return func(r events.DynamoDBEventRecord) bool {
		raw, err := json.Marshal(r)
		if err != nil {
			return false
		}
		var doc map[string]any
		if json.Unmarshal(raw, &doc) != nil {
			return false
		}
		for _, p := range patterns {
			if matchObject(p, doc) {
				return true
			}
		}
		return false
	}
}

func matchObject(pattern, doc map[string]any) bool {
	for key, want := range pattern {
		got, ok := doc[key]
		if !ok {
			return false
		}
		switch want := want.(type) {
		case map[string]any:
			sub, ok := got.(map[string]any)
			if !ok || !matchObject(want, sub) {
				return false
			}
		case []any:
			if !matchValue(want, got) {
				return false
			}
		default:
			return false // not a pattern
		}
	}
	return true
}

// matchValue reports whether got is one of the values allowed.
func matchValue(allowed []any, got any) bool {
	s, isString := got.(string)
	for _, a := range allowed {
		switch a := a.(type) {
		case string:
			if isString && s == a {
				return true
			}
		case map[string]any:
			if p, ok := a["prefix"].(string); ok && len(a) == 1 && isString && strings.HasPrefix(s, p) {
				return true
			}
		}
	}
	return false
}
