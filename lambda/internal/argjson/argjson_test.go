package argjson_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/example/appsync-dynamo/lambda/internal/argjson"
)

// strs is the shape of most arguments and sources: string fields alone.
type strs struct {
	ID     string `json:"id"`
	Handle string `json:"handle"`
}

// mixed is a source's shape with more than strings: decoded by
// encoding/json from the members it names.
type mixed struct {
	ID     string   `json:"id"`
	Count  int      `json:"commentCount"`
	Tags   []string `json:"tags"`
	Hidden string   `json:"-"`
	Ptr    *string  `json:"bio"`
}

// untagged has a field without a tag: every member is decoded.
type untagged struct {
	ID   string `json:"id"`
	Name string
}

// FuzzDecoders compares Args and Source with encoding/json on the JSON
// objects an event holds, for each shape: the same fields, and an error for
// the same inputs.
func FuzzDecoders(f *testing.F) {
	f.Add([]byte(`{"id":"p1","handle":"a\u00e9\"","ID":null,"x":[1,{"id":2}]}`))
	f.Add([]byte(`{"id":"x","id":null}`))
	f.Add([]byte(`{"iD":5}`))
	f.Add([]byte(`{"handle":"\ud800","Handle":"b","\u0069d":"k"}`))
	f.Add([]byte(`{"id":"p","commentCount":3,"tags":["a"],"-":"h","bio":null,"body":"` + "\U0001F600" + `","Name":"n"}`))
	f.Add([]byte(`{"commentCount":"3"}`))
	f.Add([]byte(`["id"]`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if !json.Valid(raw) || len(raw) == 0 {
			return
		}
		same(t, "Args", raw, argjson.Args[strs])
		same(t, "Args", raw, argjson.Args[mixed])
		if raw[0] != '{' { // a source is an object
			return
		}
		same(t, "Source", raw, argjson.Source[strs])
		same(t, "Source", raw, argjson.Source[mixed])
		same(t, "Source", raw, argjson.Source[untagged])
	})
}

func same[T any](t *testing.T, name string, raw []byte, decode func([]byte) (T, error)) {
	t.Helper()
	var want T
	wantErr := json.Unmarshal(raw, &want)
	got, err := decode(raw)
	if (err != nil) != (wantErr != nil) || (err == nil && !reflect.DeepEqual(got, want)) {
		t.Fatalf("%s(%s) = %+v, %v; encoding/json: %+v, %v", name, raw, got, err, want, wantErr)
	}
}
