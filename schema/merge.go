package schema

import (
	"fmt"
	"regexp"
	"strings"
)

// Merge returns sdl, a schema, with each fragment merged in as AppSync
// takes a schema: in one document, without type extensions. An optional
// feature declares its part of the API as a fragment (lambda/trending's
// schema.graphql): the fields of each `extend type T { ... }` in it go at
// the end of T's definition in sdl, their comments with them, and every
// other definition (its types, enums, inputs) is appended as written.
// Merging the fragments into the text leaves sdl's own text, comments
// included, as it is; the comments before an extension (a fragment's
// header) are left out.
func Merge(sdl string, fragments ...string) (string, error) {
	for _, f := range fragments {
		var err error
		if sdl, err = merge(sdl, f); err != nil {
			return "", err
		}
	}
	return sdl, nil
}

var extension = regexp.MustCompile(`^extend\s+type\s+([_A-Za-z][_0-9A-Za-z]*)[^{]*\{`)

func merge(sdl, fragment string) (string, error) {
	var appended []string
	for rest := fragment; strings.TrimSpace(rest) != ""; {
		open := block(rest)
		if open < 0 {
			return "", fmt.Errorf("a definition of the fragment has no body: %q", strings.TrimSpace(rest))
		}
		end := closing(rest, open)
		if end < 0 {
			return "", fmt.Errorf("a definition of the fragment is not closed: %q", strings.TrimSpace(rest[:open]))
		}
		def := rest[:end+1]
		rest = rest[end+1:]
		comments, body := splitComments(def)
		m := extension.FindStringSubmatch(body)
		if m == nil {
			appended = append(appended, strings.TrimSpace(def))
			continue
		}
		fields := strings.TrimRight(def[strings.IndexByte(def, '{')+1:len(def)-1], " \t\n")
		_ = comments // of the fragment, not of a field: its fields carry their own
		var err error
		if sdl, err = extend(sdl, m[1], fields); err != nil {
			return "", err
		}
	}
	if len(appended) > 0 {
		sdl = strings.TrimRight(sdl, "\n") + "\n\n" + strings.Join(appended, "\n\n") + "\n"
	}
	return sdl, nil
}

// extend inserts fields at the end of the body of type name in sdl.
func extend(sdl, name, fields string) (string, error) {
	def := regexp.MustCompile(`(?m)^type\s+` + name + `\b[^{]*\{`).FindStringIndex(sdl)
	if def == nil {
		return "", fmt.Errorf("extend type %s: the schema has no type %s", name, name)
	}
	end := closing(sdl, def[1]-1)
	if end < 0 {
		return "", fmt.Errorf("type %s is not closed", name)
	}
	return sdl[:end] + strings.TrimLeft(fields, "\n") + "\n" + sdl[end:], nil
}

// block returns the index of the first '{' of text outside comments and
// strings, or -1.
func block(text string) int {
	return scan(text, 0, func(c byte) bool { return c == '{' })
}

// closing returns the index of the '}' that closes the '{' at text[open],
// outside comments and strings, or -1.
func closing(text string, open int) int {
	depth := 0
	return scan(text, open, func(c byte) bool {
		switch c {
		case '{':
			depth++
		case '}':
			depth--
		}
		return c == '}' && depth == 0
	})
}

// scan returns the index of the first byte of text from i on, outside
// comments and strings, for which stop is true, or -1.
func scan(text string, i int, stop func(c byte) bool) int {
	for ; i < len(text); i++ {
		switch text[i] {
		case '#':
			i = lineEnd(text, i)
		case '"':
			i = stringEnd(text, i)
		default:
			if stop(text[i]) {
				return i
			}
		}
	}
	return -1
}

func lineEnd(text string, i int) int {
	if n := strings.IndexByte(text[i:], '\n'); n >= 0 {
		return i + n
	}
	return len(text)
}

// stringEnd returns the index of the last quote of the string (or block
// string) that starts at text[i].
func stringEnd(text string, i int) int {
	if strings.HasPrefix(text[i:], `"""`) {
		if n := strings.Index(text[i+3:], `"""`); n >= 0 {
			return i + 3 + n + 2
		}
		return len(text)
	}
	for j := i + 1; j < len(text); j++ {
		switch text[j] {
		case '\\':
			j++
		case '"', '\n':
			return j
		}
	}
	return len(text)
}

// splitComments splits a definition's text into the comment lines before
// it and the definition itself.
func splitComments(def string) (comments, body string) {
	lines := strings.Split(def, "\n")
	i := 0
	for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || strings.HasPrefix(strings.TrimSpace(lines[i]), "#")) {
		i++
	}
	return strings.TrimSpace(strings.Join(lines[:i], "\n")), strings.TrimSpace(strings.Join(lines[i:], "\n"))
}
