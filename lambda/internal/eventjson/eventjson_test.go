package eventjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/internal/eventjson"
)

const single = `{
  "arguments": {"id": "u_alice"},
  "identity": {"sub": "u_alice", "issuer": "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_x", "username": "alice",
               "claims": {"sub": "u_alice"}, "sourceIp": ["203.0.113.7"], "defaultAuthStrategy": "ALLOW", "groups": null},
  "source": null,
  "request": {"headers": {"x-forwarded-for": "203.0.113.7", "x-multi": ["a", "b"]}, "domainName": null},
  "prev": null,
  "info": {"fieldName": "user", "parentTypeName": "Query", "variables": {},
           "selectionSetList": ["id", "posts", "posts/items", "posts/items/title", "p2", "p2/items"],
           "selectionSetGraphQL": "{\n  id\n  posts {\n    items {\n      title\n    }\n  }\n}"},
  "stash": {}
}`

func TestDecodeSingle(t *testing.T) {
	evs, batch, err := eventjson.Decode([]byte(" \n" + single))
	if err != nil || batch || len(evs) != 1 {
		t.Fatalf("Decode = %d events, batch %v, err %v", len(evs), batch, err)
	}
	ev := evs[0]
	if ev.Info.Field() != "Query.user" || ev.Identity.UserID() != "u_alice" || string(ev.Source) != "null" {
		t.Errorf("decoded %+v", ev)
	}
	var list []string
	if err := json.Unmarshal(ev.Info.SelectionSetList, &list); err != nil || !slices.Equal(list, []string{"id", "posts", "posts/items", "posts/items/title", "p2", "p2/items"}) {
		t.Errorf("SelectionSetList = %s (%v)", ev.Info.SelectionSetList, err)
	}
}

func TestDecodeBatch(t *testing.T) {
	evs, batch, err := eventjson.Decode([]byte("[" + single + "," + single + "]"))
	if err != nil || !batch || len(evs) != 2 {
		t.Fatalf("Decode = %d events, batch %v, err %v", len(evs), batch, err)
	}
	evs, batch, err = eventjson.Decode([]byte("[]"))
	if err != nil || !batch || len(evs) != 0 {
		t.Fatalf("empty batch: %d events, batch %v, err %v", len(evs), batch, err)
	}
}

func TestDecodeMalformed(t *testing.T) {
	for _, p := range []string{"", "   ", "nul", "{", "[{]", `"text"`, `{"info": 5}`,
		`{"request":{"a" "b",,,}}`, "{\"prev\":\"a\x01b\"}", `{"stash":"\q"}`, `{"prev":01}`, `{"prev":1.}`, `{"prev":tru}`} {
		if _, _, err := eventjson.Decode([]byte(p)); !errors.Is(err, appsync.ErrMalformed) {
			t.Errorf("Decode(%q) err = %v, want ErrMalformed", p, err)
		}
	}
}

func TestIdentityUserID(t *testing.T) {
	var apiKey *appsync.Identity
	cases := map[string]struct {
		id   *appsync.Identity
		want string
	}{
		"api key": {apiKey, ""},
		"cognito": {&appsync.Identity{Sub: "s1", Username: "alice"}, "s1"},
		"iam":     {&appsync.Identity{AccountID: "123", UserArn: "arn:aws:iam::123:user/x"}, ""},
		"lambda":  {&appsync.Identity{ResolverContext: map[string]string{"userId": "u9"}}, "u9"},
	}
	for name, c := range cases {
		if got := c.id.UserID(); got != c.want {
			t.Errorf("%s: UserID = %q, want %q", name, got, c.want)
		}
	}
}

// The scanner must decode exactly what encoding/json decodes, on every
// replayable event and on edge cases.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	files, _ := filepath.Glob("../../../events/*.json")
	features, _ := filepath.Glob("../../../lambda/*/events/*.json")
	files = append(files, features...)
	if len(files) == 0 {
		t.Fatal("no events")
	}
	payloads := [][]byte{
		[]byte(`{"arguments":{"s":"a\"}]b\\"},"source":null,"info":{"fieldName":"x","parentTypeName":"Y"},"extra":[1,{"a":[true,false,null]}],"n":-1.5e3}`),
		[]byte(` [ ] `),
		[]byte(`[{"info":{"fieldName":"a","parentTypeName":"B","selectionSetList":[]}},{}]`),
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, b)
	}
	for _, p := range payloads {
		got, batch, err := eventjson.Decode(p)
		if err != nil {
			t.Errorf("Decode(%.60s): %v", p, err)
			continue
		}
		var want []appsync.Event
		if batch {
			err = json.Unmarshal(p, &want)
		} else {
			want = make([]appsync.Event, 1)
			err = json.Unmarshal(p, &want[0])
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(want) {
			t.Fatalf("%d events, want %d", len(got), len(want))
		}
		for i := range got {
			g, _ := json.Marshal(got[i])
			w, _ := json.Marshal(want[i])
			if !bytes.Equal(g, w) {
				t.Errorf("event %d of %.60s:\n got %s\nwant %s", i, p, g, w)
			}
		}
	}
}

// FuzzDecode checks that Decode accepts exactly what encoding/json accepts
// and decodes it to the same events.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(single))
	f.Add([]byte("[" + single + "]"))
	f.Add([]byte(`[{"a":"\\"}]`))
	f.Add([]byte(`{"request":{"a" "b",,,}}`))
	f.Add([]byte("{\"info\":{\"fieldName\":\"a\tb\"}}"))
	f.Add([]byte(`{"arguments":"\q"}`))
	f.Add([]byte(`{"info":null}`))
	f.Add([]byte(`{"Info":{"FIELDNAME":"x","fieldName":null},"INFO":{"parentTypeName":"Y"},"identity":{"sub":"a"},"Identity":{"username":"b"}}`))
	f.Add([]byte(`[null,{"stash":[1e5,-0.5,0,true,false,null,{}]}]`))
	f.Add([]byte(`{"prev":01}`))
	f.Add([]byte(`{"info":{"selectionSetList":["a",null,"b\u00e9"]},"identity":{"groups":null,"sourceIp":[]}}`))
	f.Add([]byte(`{"identity":{"sourceIp":[1]},"info":{"selectionSetList":"a"}}`))
	// Repeated members across a batch (remembered), and duplicates that merge.
	f.Add([]byte(`[{"identity":{"sub":"a","resolverContext":{"k":"v"}},"info":{"fieldName":"f"},"request":{"h":1}},` +
		`{"identity":{"sub":"a","resolverContext":{"k":"v"}},"identity":{"resolverContext":{"x":"y"}},"info":{"fieldName":"f"},"info":{"parentTypeName":"P"},"request":{"h":1}},` +
		`{"identity":{"sub":"a","resolverContext":{"k":"v"}},"info":{"fieldName":"f"},"request":{"h":1},"stash":{"h":1}}]`))
	f.Add([]byte(`[{"arguments":{"a":1}},{"arguments":{"a":1}x}]`))
	f.Fuzz(func(t *testing.T, p []byte) {
		got, gotBatch, err := eventjson.Decode(p)
		want, wantBatch, wantErr := appsync.Decode(p) // encoding/json, the reference
		if (err == nil) != (wantErr == nil) {
			t.Fatalf("Decode(%q): err %v; encoding/json: %v", p, err, wantErr)
		}
		if err != nil {
			return
		}
		if gotBatch != wantBatch || !reflect.DeepEqual(normalize(got), normalize(want)) {
			t.Fatalf("Decode(%q):\n got %+v\nwant %+v", p, got, want)
		}
	})
}

// normalize makes empty raw members comparable: encoding/json copies them,
// Decode slices the payload.
func normalize(evs []appsync.Event) []appsync.Event {
	out := make([]appsync.Event, len(evs))
	for i, e := range evs {
		b, _ := json.Marshal(e)
		out[i] = e
		out[i].Arguments, out[i].Source, out[i].Request, out[i].Prev, out[i].Stash = nil, nil, nil, nil, json.RawMessage(b)
	}
	return out
}

// EachMember and EachElement see what encoding/json sees: the same members
// in the same order (keys unquoted alike), the same elements, and they
// refuse what it refuses.
func FuzzEach(f *testing.F) {
	f.Add([]byte(`{"id":"p1","items":[{"a":1},null,"x"],"k\u00e9y":{"n":[1,2]}}`))
	f.Add([]byte(`[1, {"a": "b"}, [], "s\"q"]`))
	f.Add([]byte(`{"a":1,}`))
	f.Add([]byte(` {} `))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var members []string
		errObj := eventjson.EachMember(raw, func(key, value []byte) {
			var k string
			if err := json.Unmarshal(key, &k); err != nil {
				t.Fatalf("key %q: %v", key, err)
			}
			members = append(members, k+"="+compact(t, value))
		})
		var elems []string
		errArr := eventjson.EachElement(raw, func(value []byte) { elems = append(elems, compact(t, value)) })

		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err == nil && obj != nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.Token()
			var want []string
			for dec.More() {
				k, _ := dec.Token()
				var v json.RawMessage
				dec.Decode(&v)
				want = append(want, k.(string)+"="+compact(t, v))
			}
			if errObj != nil || strings.Join(members, "\n") != strings.Join(want, "\n") {
				t.Fatalf("EachMember(%q) = %q, %v; want %q", raw, members, errObj, want)
			}
		} else if errObj == nil {
			t.Fatalf("EachMember(%q) accepted what is not a JSON object", raw)
		}
		var arr []json.RawMessage
		if err := json.Unmarshal(raw, &arr); err == nil && arr != nil {
			var want []string
			for _, v := range arr {
				want = append(want, compact(t, v))
			}
			if errArr != nil || strings.Join(elems, "\n") != strings.Join(want, "\n") {
				t.Fatalf("EachElement(%q) = %q, %v; want %q", raw, elems, errArr, want)
			}
		} else if errArr == nil {
			t.Fatalf("EachElement(%q) accepted what is not a JSON array", raw)
		}
	})
}

func compact(t *testing.T, v []byte) string {
	var b bytes.Buffer
	if err := json.Compact(&b, v); err != nil {
		t.Fatalf("value %q: %v", v, err)
	}
	return b.String()
}

// TestNestingLimitAsEncodingJSON puts values nested around encoding/json's
// limit (10,000 arrays and objects, counting the batch and the event) in
// every kind of member the decoder reads or skips, in a single event and
// in a batch: Decode refuses exactly what encoding/json refuses.
func TestNestingLimitAsEncodingJSON(t *testing.T) {
	nested := func(n int) string { return strings.Repeat(`[`, n-1) + `{"a":1}` + strings.Repeat(`]`, n-1) }
	members := map[string]func(v string) string{
		"source":                   func(v string) string { return `{"source":` + v + `}` },
		"arguments":                func(v string) string { return `{"arguments":` + v + `}` },
		"an unknown member":        func(v string) string { return `{"x":` + v + `}` },
		"info.variables":           func(v string) string { return `{"info":{"variables":` + v + `}}` },
		"info, an unknown member":  func(v string) string { return `{"info":{"x":` + v + `}}` },
		"identity.claims":          func(v string) string { return `{"identity":{"claims":` + v + `}}` },
		"identity.resolverContext": func(v string) string { return `{"identity":{"resolverContext":{"k":` + v + `}}}` },
		"identity, unknown member": func(v string) string { return `{"identity":{"x":` + v + `}}` },
	}
	for name, event := range members {
		for n := 9995; n <= 10001; n++ {
			for _, payload := range []string{event(nested(n)), `[` + event(nested(n)) + `]`} {
				var single appsync.Event
				var batch []appsync.Event
				var want error
				if payload[0] == '[' {
					want = json.Unmarshal([]byte(payload), &batch)
				} else {
					want = json.Unmarshal([]byte(payload), &single)
				}
				_, _, got := eventjson.Decode([]byte(payload))
				if (got == nil) != (want == nil) {
					t.Errorf("%s nested %d deep (batch %v): Decode %v, encoding/json %v", name, n, payload[0] == '[', got, want)
				}
			}
		}
	}
}
