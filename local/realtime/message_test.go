package realtime_test

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/example/appsync-dynamo/local/realtime"
)

// Each reading writes JSON that decodes to what was encoded; escaped, in
// ASCII alone, each character outside it as the \u escapes of its UTF-16
// units (6 bytes, 12 past U+FFFF) and nothing else changed; in UTF-8, each
// such character as itself. '<', '>' and '&' stay themselves in both.
func TestMessagesAreWrittenAsTheReadingSays(t *testing.T) {
	alphabet := []rune{'a', 'Z', '0', ' ', '"', '\\', '\n', '\x01', '<', '>', '&', 'é', 'ß', '€', '中', '\u2028', '\ufeff', '😀', '𝄞', '\U0010ffff'}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 2000 {
		runes := make([]rune, rng.IntN(40))
		for j := range runes {
			runes[j] = alphabet[rng.IntN(len(alphabet))]
		}
		value := map[string]any{"body": string(runes), "n": i}
		utf, err := realtime.UTF8Of240000.Encode(value)
		if err != nil {
			t.Fatal(err)
		}
		want := len(utf)
		for _, r := range runes {
			switch {
			case r == '\u2028': // Go writes it escaped in both
			case r > 0xffff:
				want += 12 - utf8.RuneLen(r)
			case r >= utf8.RuneSelf:
				want += 6 - utf8.RuneLen(r)
			}
		}
		for _, reading := range realtime.MessageReadings {
			b, err := reading.Encode(value)
			if err != nil {
				t.Fatal(err)
			}
			var back map[string]any
			if err := json.Unmarshal(b, &back); err != nil || back["body"] != string(runes) {
				t.Fatalf("%s wrote %q for %q: %v", reading, b, string(runes), err)
			}
			ascii := true
			for _, c := range b {
				ascii = ascii && c < utf8.RuneSelf
			}
			switch {
			case reading.Escaped() && (!ascii || len(b) != want):
				t.Fatalf("%s wrote %q (%d bytes) for %q; want ASCII, %d bytes", reading, b, len(b), string(runes), want)
			case !reading.Escaped() && string(b) != string(utf):
				t.Fatalf("%s wrote %q, and %s %q", reading, b, realtime.UTF8Of240000, utf)
			}
		}
		for _, c := range "<>&" {
			if runes := string(runes); strings.ContainsRune(runes, c) && !strings.ContainsRune(string(utf), c) {
				t.Fatalf("%q written %q", runes, utf)
			}
		}
	}
}

// A reading's name is its String, and names no other.
func TestAMessageReadingByName(t *testing.T) {
	for _, reading := range realtime.MessageReadings {
		if got, err := realtime.ParseMessageReading(reading.String()); err != nil || got != reading {
			t.Errorf("%s read back as %s, %v", reading, got, err)
		}
	}
	if _, err := realtime.ParseMessageReading("utf16-240000"); err == nil {
		t.Error("an unknown reading was taken")
	}
}
