package eventjson_test

// The measurement that chose the scanner: JSON decoders compared on the
// Lambda's traffic, for speed and for whether they refuse what
// encoding/json refuses (make bench). The libraries are test dependencies
// here only: the function uses the scanner alone.

import (
	"encoding/json"
	"reflect"
	"testing"

	gojson "github.com/goccy/go-json"
	jsoniter "github.com/json-iterator/go"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/internal/eventjson"
	"github.com/example/appsync-dynamo/local/traffic"
)

// decoders decode a batch payload into events.
var decoders = []struct {
	name   string
	decode func([]byte) ([]appsync.Event, error)
}{
	{"encoding-json", func(b []byte) ([]appsync.Event, error) {
		var evs []appsync.Event
		return evs, json.Unmarshal(b, &evs)
	}},
	{"eventjson", func(b []byte) ([]appsync.Event, error) {
		evs, _, err := eventjson.Decode(b)
		return evs, err
	}},
	{"goccy-go-json", func(b []byte) ([]appsync.Event, error) {
		var evs []appsync.Event
		return evs, gojson.Unmarshal(b, &evs)
	}},
	{"json-iterator", func(b []byte) ([]appsync.Event, error) {
		var evs []appsync.Event
		return evs, jsoniter.ConfigCompatibleWithStandardLibrary.Unmarshal(b, &evs)
	}},
}

// BenchmarkDecoders decodes the 100-event Post.author batch (365 kB) with
// each decoder: ns per event, bytes and allocations.
func BenchmarkDecoders(b *testing.B) {
	c := traffic.Cases()[0]
	for _, d := range decoders {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.Payload)))
			for b.Loop() {
				if _, err := d.decode(c.Payload); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(c.Events), "ns/event")
		})
	}
}

// invalid are batches encoding/json refuses, the fault hidden in a member
// the resolvers never read.
var invalid = map[string]string{
	"bad escape in a header":       `[{"request":{"headers":{"x":"\q"}},"info":{"fieldName":"author"}}]`,
	"control character in a claim": "[{\"identity\":{\"claims\":{\"x\":\"a\tb\"}},\"info\":{\"fieldName\":\"author\"}}]",
	"trailing comma in stash":      `[{"stash":{"a":1,},"info":{"fieldName":"author"}}]`,
	"bad number in prev":           `[{"prev":01,"info":{"fieldName":"author"}}]`,
	"unclosed array":               `[{"info":{"fieldName":"author"}}`,
	"garbage after":                `[{"info":{"fieldName":"author"}}] x`,
}

// TestDecodersOnInvalidInput records which decoders accept what
// encoding/json refuses, and which decode the traffic otherwise; the
// scanner must refuse all of it and decode alike.
func TestDecodersOnInvalidInput(t *testing.T) {
	for _, d := range decoders {
		var accepted []string
		for name, payload := range invalid {
			if _, err := d.decode([]byte(payload)); err == nil {
				accepted = append(accepted, name)
			}
		}
		switch d.name {
		case "encoding-json", "appsync-scanner":
			if len(accepted) > 0 {
				t.Errorf("%s accepts invalid input: %q", d.name, accepted)
			}
		default:
			t.Logf("%s accepts %d of %d invalid batches: %q", d.name, len(accepted), len(invalid), accepted)
		}
	}
	// And all decode the traffic's batches alike.
	for _, c := range traffic.Cases() {
		if c.Payload[0] != '[' {
			continue
		}
		want, err := decoders[0].decode(c.Payload)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range decoders[1:] {
			got, err := d.decode(c.Payload)
			same := err == nil && reflect.DeepEqual(got, want)
			switch {
			case d.name == "appsync-scanner" && !same:
				t.Errorf("the scanner decodes %s otherwise than encoding/json (%v)", c.Name, err)
			case !same:
				// json-iterator keeps "prev": null as an empty RawMessage, not "null".
				t.Logf("%s decodes %s otherwise than encoding/json (%v)", d.name, c.Name, err)
			}
		}
	}
}
