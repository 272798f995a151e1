package ddbjson_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"net/http"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/internal/ddbjson"
	"github.com/example/appsync-dynamo/lambda/store"
)

// wire serves one response body at a time to two clients: the SDK's as it
// comes, and the store's (store.ClientOptions, which decodes BatchGetItem's
// responses with ddbjson); decode returns what each made of body.
type wire struct {
	body      atomic.Pointer[string]
	crc       atomic.Int64 // -1: no X-Amz-Crc32; else the value sent
	sdk, ours *dynamodb.Client
}

func newWire(t testing.TB) *wire {
	w := &wire{}
	// The responses are made in process: the clients' HTTP client answers
	// each request with the body and CRC32 stored.
	answer := doer(func(r *http.Request) (*http.Response, error) {
		body := *w.body.Load()
		h := http.Header{"Content-Type": {"application/x-amz-json-1.0"}}
		if c := w.crc.Load(); c >= 0 {
			h.Set("X-Amz-Crc32", fmt.Sprint(c))
		}
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: h, Body: io.NopCloser(strings.NewReader(body)),
			ContentLength: int64(len(body)), Request: r, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
	})
	cfg := aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("k", "s", ""), HTTPClient: answer}
	endpoint := func(o *dynamodb.Options) {
		o.BaseEndpoint = aws.String("http://dynamodb.invalid")
		o.RetryMaxAttempts = 1
	}
	w.sdk = dynamodb.NewFromConfig(cfg, endpoint)
	w.ours = dynamodb.NewFromConfig(cfg, store.ClientOptions, endpoint)
	return w
}

// doer is an HTTP client in a function.
type doer func(*http.Request) (*http.Response, error)

func (d doer) Do(r *http.Request) (*http.Response, error) { return d(r) }

func (w *wire) decode(body string, crc int64) (sdk, ours *dynamodb.BatchGetItemOutput, sdkErr, oursErr error) {
	w.body.Store(&body)
	w.crc.Store(crc)
	in := &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{"t": {Keys: []map[string]types.AttributeValue{{"pk": &types.AttributeValueMemberS{Value: "a"}}}}}}
	sdk, sdkErr = w.sdk.BatchGetItem(context.Background(), in)
	ours, oursErr = w.ours.BatchGetItem(context.Background(), in)
	return
}

// same reports whether both decoded body alike: the same outputs (but their
// request metadata), or both an error.
func same(sdk, ours *dynamodb.BatchGetItemOutput, sdkErr, oursErr error) bool {
	if sdkErr != nil || oursErr != nil {
		return sdkErr != nil && oursErr != nil
	}
	a, b := *sdk, *ours
	a.ResultMetadata = b.ResultMetadata
	return reflect.DeepEqual(a, b)
}

// Generated responses (every type of attribute value, nested, escapes,
// four-byte and invalid UTF-8, white space, capacities, unprocessed keys,
// members unknown) decode with the store's client exactly as with the SDK's.
func TestBatchGetItemDecodesAsTheSDK(t *testing.T) {
	w := newWire(t)
	decoded := 0
	for seed := range uint64(3000) {
		r := rand.New(rand.NewPCG(seed, 7))
		body := genResponse(r)
		crc := int64(crc32.ChecksumIEEE([]byte(body)))
		sdk, ours, sdkErr, oursErr := w.decode(body, crc)
		if !same(sdk, ours, sdkErr, oursErr) {
			t.Fatalf("seed %d: %s\nSDK: %+v %v\nours: %+v %v", seed, body, sdk, sdkErr, ours, oursErr)
		}
		if direct, err := ddbjson.BatchGetItem([]byte(body)); err == nil {
			decoded++
			if !same(sdk, direct, sdkErr, nil) {
				t.Fatalf("seed %d: ddbjson decoded %s\nas %+v\nthe SDK as %+v %v", seed, body, direct, sdk, sdkErr)
			}
		}
	}
	// Most of them by ddbjson itself, not handed back to the SDK.
	if decoded < 3000/2 {
		t.Errorf("ddbjson decoded %d of 3,000 responses", decoded)
	}
	t.Logf("ddbjson decoded %d of 3,000 responses; the SDK the others", decoded)
}

// A body whose CRC32 is not the one sent is refused; a body sent without
// one (DynamoDB Local's errors) is read as it is.
func TestBatchGetItemChecksTheCRC32(t *testing.T) {
	w := newWire(t)
	body := `{"Responses":{"t":[{"pk":{"S":"a"}}]},"UnprocessedKeys":{}}`
	if _, ours, _, err := w.decode(body, int64(crc32.ChecksumIEEE([]byte(body)))); err != nil || len(ours.Responses["t"]) != 1 {
		t.Errorf("the right CRC32: %v", err)
	}
	if _, _, _, err := w.decode(body, 12345); err == nil {
		t.Error("a wrong CRC32 was not refused")
	}
	if _, ours, _, err := w.decode(body, -1); err != nil || len(ours.Responses["t"]) != 1 {
		t.Errorf("no CRC32: %v", err)
	}
}

func FuzzBatchGetItemDecodesAsTheSDK(f *testing.F) {
	for seed := range uint64(20) {
		f.Add(genResponse(rand.New(rand.NewPCG(seed, 7))))
	}
	w := newWire(f)
	// What ddbjson decodes must be the SDK's decoding, and the store's
	// client's. What it hands back the SDK decodes from the same bytes; that
	// is not compared here: the SDK decodes a value of several members either
	// way, by its map's order, and errs or not by it
	// (TestBatchGetItemDecodesAsTheSDK compares such responses, generated
	// deterministic).
	f.Fuzz(func(t *testing.T, body string) {
		direct, err := ddbjson.BatchGetItem([]byte(body))
		if err != nil {
			return
		}
		sdk, ours, sdkErr, oursErr := w.decode(body, int64(crc32.ChecksumIEEE([]byte(body))))
		if !same(sdk, direct, sdkErr, nil) || !same(direct, ours, nil, oursErr) {
			t.Errorf("%q\nddbjson: %+v\nSDK: %+v %v\nthe store's client: %+v %v", body, direct, sdk, sdkErr, ours, oursErr)
		}
	})
}

// genResponse writes a BatchGetItem response as DynamoDB might, and some
// it would not.
func genResponse(r *rand.Rand) string {
	sp := func() string { return []string{"", "", " ", "\n  "}[r.IntN(4)] }
	var b strings.Builder
	b.WriteString("{" + sp())
	var members []string
	if r.IntN(10) > 0 {
		var tables []string
		for i := range r.IntN(3) {
			var items []string
			for range r.IntN(5) {
				items = append(items, genItem(r, 2))
			}
			tables = append(tables, fmt.Sprintf(`"table%d":%s[%s]`, i, sp(), strings.Join(items, ","+sp())))
		}
		members = append(members, `"Responses":`+sp()+"{"+strings.Join(tables, ",")+"}")
	}
	switch r.IntN(6) {
	case 0:
	case 1:
		members = append(members, `"UnprocessedKeys":{"t":{"Keys":[`+genItem(r, 0)+`],"ConsistentRead":true}}`)
	default:
		members = append(members, `"UnprocessedKeys":`+sp()+`{}`)
	}
	if r.IntN(3) > 0 {
		c := `{"TableName":"t","CapacityUnits":` + []string{"1", "2.5", "0.5", "1e1", "30"}[r.IntN(5)]
		if r.IntN(2) == 0 {
			c += `,"Table":{"CapacityUnits":1.5,"ReadCapacityUnits":1.5},"GlobalSecondaryIndexes":{"GSI1":{"CapacityUnits":0.5}}`
		}
		if r.IntN(8) == 0 {
			c += `,"LocalSecondaryIndexes":{},"WriteCapacityUnits":0`
		}
		members = append(members, `"ConsumedCapacity":[`+c+"}]")
	}
	if r.IntN(15) == 0 {
		members = append(members, `"Unknown":1`)
	}
	r.Shuffle(len(members), func(i, j int) { members[i], members[j] = members[j], members[i] })
	b.WriteString(strings.Join(members, ","+sp()))
	b.WriteString(sp() + "}")
	body := b.String()
	if r.IntN(40) == 0 { // malformed
		body = body[:r.IntN(len(body)+1)]
	}
	return body
}

func genItem(r *rand.Rand, depth int) string {
	var attrs []string
	for range 1 + r.IntN(6) {
		attrs = append(attrs, genString(r)+":"+genValue(r, depth))
	}
	return "{" + strings.Join(attrs, ",") + "}"
}

func genValue(r *rand.Rand, depth int) string {
	kinds := 7
	if depth > 0 {
		kinds = 11
	}
	switch r.IntN(kinds) {
	case 0, 1:
		return `{"S":` + genString(r) + `}`
	case 2:
		return `{"N":"` + []string{"1", "-2.5", "1e10", "0"}[r.IntN(4)] + `"}`
	case 3:
		return `{"B":"` + base64.StdEncoding.EncodeToString([]byte(genRaw(r))) + `"}`
	case 4:
		return `{"BOOL":` + []string{"true", "false"}[r.IntN(2)] + `}`
	case 5:
		return `{"NULL":true}`
	case 6:
		return `{"SS":[` + genString(r) + "," + genString(r) + `]}`
	case 7:
		return `{"M":` + genItem(r, depth-1) + `}`
	case 8:
		return `{"L":[` + genValue(r, depth-1) + "," + genValue(r, depth-1) + `]}`
	case 9: // a type the decoder does not know (the SDK's UnknownUnionMember); two members are not
		// generated: the SDK keeps either, by its map's order
		return []string{`{"NS":["1","2"]}`, `{"X":"unknown"}`}[r.IntN(2)]
	default:
		return `{"BS":["` + base64.StdEncoding.EncodeToString([]byte(genRaw(r))) + `"]}`
	}
}

// genString is a JSON string: plain, escaped, four-byte, or invalid UTF-8.
func genString(r *rand.Rand) string {
	switch r.IntN(6) {
	case 0:
		b, _ := json.Marshal(genRaw(r) + "\"\\\n\u00e9")
		return string(b)
	case 1:
		return `"𝄞 four bytes"`
	case 2:
		return "\"bad \xff utf-8\""
	case 3:
		return `"\ud834\udd1e escaped"`
	default:
		return `"` + genRaw(r) + `"`
	}
}

func genRaw(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyz_#"
	b := make([]byte, r.IntN(12))
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}
