package payload_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/example/appsync-dynamo/lambda/payload"
)

// FuzzMembers checks Members against encoding/json on valid JSON: each
// member found is the one encoding/json decodes.
func FuzzMembers(f *testing.F) {
	f.Add([]byte(`{"id":"p1","authorId":"u\\"x\\\\","body":"<long> \"quoted\" \\","n":-1.5e3,"o":{"a":["}",{"b":"]"}]},"ID":"P"}`))
	f.Add([]byte(`{"ID":"a","id":"b","AuthorID":"c","\u0069d":"d","\u212aey":1}`))
	f.Add([]byte(` { "authorId" : null , "x" : true } `))
	f.Add([]byte(`{"body":"\",\"id\":\"forged\\","id":"real"}`))
	f.Add([]byte(`null`))
	type source struct {
		O json.RawMessage `json:"o"`
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var whole source
		if !json.Valid(raw) || json.Unmarshal(raw, &whole) != nil {
			return // Members reads valid JSON of an object's shape only
		}
		if o := payload.Members(raw, "o")[0]; o != nil && !bytes.Equal(o, whole.O) {
			t.Fatalf("Members(%q, o) = %s, want %s", raw, o, whole.O)
		}
	})
}

// Walk, Skip and EachElement see what encoding/json sees in valid JSON: the
// same members in the same order, nested ones reached in the same pass, and
// the same elements, counted.
func FuzzWalk(f *testing.F) {
	f.Add([]byte(`{"id":"p1","items":[{"a":1},null,"x"],"k\u00e9y":{"n":[1,2]}}`))
	f.Add([]byte(`[1, "a,]", {"b": [2, 3]}, [], null]`))
	f.Add([]byte(` [ ] `))
	f.Add([]byte(` {} `))
	f.Add([]byte(`{"a":"x\"}y","b":[1,"\"]",{"c":"\\"}]}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) {
			return
		}
		start := len(raw) - len(bytes.TrimLeft(raw, " \t\r\n"))
		end, n := payload.Skip(raw, start)
		if end != len(bytes.TrimRight(raw, " \t\r\n")) {
			t.Fatalf("Skip(%q) ends at %d", raw, end)
		}
		if walked, want := walkNested(t, raw, start, ""), decodeNested(t, raw, ""); !slices.Equal(walked, want) {
			t.Fatalf("Walk into every member of %q = %q, encoding/json: %q", raw, walked, want)
		}
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) != nil || arr == nil {
			return
		}
		var elems, want []string
		payload.EachElement(raw, func(v []byte) { elems = append(elems, compact(t, v)) })
		for _, v := range arr {
			want = append(want, compact(t, v))
		}
		if !slices.Equal(elems, want) || n != len(arr) {
			t.Fatalf("EachElement(%q) = %q, %d counted; encoding/json: %q", raw, elems, n, want)
		}
	})
}

// walkNested lists the members of the object at raw[i] and of the objects in
// them, as path=value, with Walk descending into each in one pass.
func walkNested(t *testing.T, raw []byte, i int, path string) (out []string) {
	payload.Walk(raw, i, func(key []byte, j int) int {
		end, _ := payload.Skip(raw, j)
		k, err := payload.Unquote(key)
		if err != nil {
			t.Fatalf("key %q: %v", key, err)
		}
		out = append(out, path+k+"="+compact(t, raw[j:end]))
		out = append(out, walkNested(t, raw, j, path+k+".")...)
		if walked := payload.Walk(raw, j, func(_ []byte, k int) int { e, _ := payload.Skip(raw, k); return e }); walked != end {
			out = append(out, fmt.Sprintf("Walk ended at %d, Skip at %d", walked, end))
		}
		return end
	})
	return out
}

// decodeNested is walkNested with encoding/json's tokens.
func decodeNested(t *testing.T, raw []byte, path string) (out []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		k, _ := dec.Token()
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, path+k.(string)+"="+compact(t, v))
		out = append(out, decodeNested(t, v, path+k.(string)+".")...)
	}
	return out
}

func compact(t *testing.T, v []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatalf("value %q: %v", v, err)
	}
	return b.String()
}
