// Package ddbjson decodes DynamoDB's JSON wire format of items (attribute
// values, {"S": "..."}, {"N": "..."}, ...) into the SDK's types without
// reflection or an intermediate tree: the strings of the items are slices
// of one copy of the body, not a string each.
//
// The SDK's own deserializer decodes a response twice, first into an
// interface{} tree with encoding/json, then from the tree into its types: a
// BatchGetItem of 30 users cost about 2,100 allocations there. The decoder
// here is exact or refuses: anything it does not know (a member, a shape,
// malformed JSON) is errUnknown, and the caller decodes the same bytes with
// the SDK instead; its tests compare it with the SDK's on generated and
// fuzzed responses.
package ddbjson

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// errUnknown is what the decoder does not decode: the SDK must.
var errUnknown = errors.New("ddbjson: not decoded here")

// BatchGetItem decodes a BatchGetItem response body: its Responses, its
// ConsumedCapacity, and UnprocessedKeys when there are none (an empty
// object); anything else is errUnknown.
func BatchGetItem(body []byte) (*dynamodb.BatchGetItemOutput, error) {
	d := decoder{s: string(body)}
	out := &dynamodb.BatchGetItemOutput{}
	ok := d.object(func(key string) bool {
		switch key {
		case "Responses":
			out.Responses = map[string][]map[string]types.AttributeValue{}
			return d.object(func(table string) bool {
				items, ok := d.items()
				out.Responses[table] = items
				return ok
			})
		case "UnprocessedKeys":
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{}
			return d.object(func(string) bool { return false }) // only {}
		case "ConsumedCapacity":
			out.ConsumedCapacity = []types.ConsumedCapacity{}
			return d.array(func() bool {
				c, ok := d.consumed()
				out.ConsumedCapacity = append(out.ConsumedCapacity, c)
				return ok
			})
		}
		return false
	})
	if !ok || !d.end() {
		return nil, errUnknown
	}
	return out, nil
}

// decoder reads s from i; every method returns false where it does not
// decode what it finds.
type decoder struct {
	s string
	i int
}

func (d *decoder) space() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\t' || d.s[d.i] == '\n' || d.s[d.i] == '\r') {
		d.i++
	}
}

// byte consumes c, after white space.
func (d *decoder) byte(c byte) bool {
	d.space()
	if d.i < len(d.s) && d.s[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) end() bool {
	d.space()
	return d.i == len(d.s)
}

// object reads {"key": value, ...}, member calling member for each key (it
// reads the value).
func (d *decoder) object(member func(key string) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		key, ok := d.str()
		if !ok || !d.byte(':') || !member(key) {
			return false
		}
		if d.byte('}') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// array reads [value, ...], element reading each value.
func (d *decoder) array(element func() bool) bool {
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	for {
		if !element() {
			return false
		}
		if d.byte(']') {
			return true
		}
		if !d.byte(',') {
			return false
		}
	}
}

// str reads a JSON string: a slice of s when it holds no escape, else
// decoded as encoding/json decodes it.
func (d *decoder) str() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start := d.i
	escaped, high := false, false
	for d.i < len(d.s) {
		switch c := d.s[d.i]; {
		case c == '"':
			d.i++
			if raw := d.s[start : d.i-1]; !escaped && (!high || utf8.ValidString(raw)) {
				return raw, true
			}
			// Escapes, or UTF-8 that encoding/json repairs: as it decodes them.
			var v string
			if json.Unmarshal([]byte(d.s[start-1:d.i]), &v) != nil {
				return "", false
			}
			return v, true
		case c == '\\':
			escaped = true
			d.i += 2
		case c < 0x20: // invalid JSON
			return "", false
		default:
			high = high || c >= utf8.RuneSelf
			d.i++
		}
	}
	return "", false
}

// number reads a JSON number.
func (d *decoder) number() (float64, bool) {
	d.space()
	start := d.i
	for d.i < len(d.s) && (d.s[d.i] >= '0' && d.s[d.i] <= '9' || d.s[d.i] == '-' || d.s[d.i] == '+' || d.s[d.i] == '.' || d.s[d.i] == 'e' || d.s[d.i] == 'E') {
		d.i++
	}
	if !json.Valid([]byte(d.s[start:d.i])) {
		return 0, false
	}
	f, err := strconv.ParseFloat(d.s[start:d.i], 64)
	return f, err == nil
}

// literal reads true or false.
func (d *decoder) literal() (bool, bool) {
	d.space()
	for _, lit := range []string{"true", "false"} {
		if len(d.s)-d.i >= len(lit) && d.s[d.i:d.i+len(lit)] == lit {
			d.i += len(lit)
			return lit == "true", true
		}
	}
	return false, false
}

// items reads an array of items.
func (d *decoder) items() ([]map[string]types.AttributeValue, bool) {
	items := []map[string]types.AttributeValue{}
	ok := d.array(func() bool {
		item, ok := d.item()
		items = append(items, item)
		return ok
	})
	return items, ok
}

// item reads an object of attribute values.
func (d *decoder) item() (map[string]types.AttributeValue, bool) {
	item := map[string]types.AttributeValue{}
	ok := d.object(func(name string) bool {
		v, ok := d.value()
		item[name] = v
		return ok
	})
	return item, ok
}

// value reads one attribute value, an object of one member naming its type.
func (d *decoder) value() (types.AttributeValue, bool) {
	var v types.AttributeValue
	n := 0
	ok := d.object(func(kind string) bool {
		if n++; n > 1 {
			return false
		}
		var ok bool
		v, ok = d.typed(kind)
		return ok
	})
	return v, ok && n == 1
}

func (d *decoder) typed(kind string) (types.AttributeValue, bool) {
	switch kind {
	case "S":
		s, ok := d.str()
		return &types.AttributeValueMemberS{Value: s}, ok
	case "N":
		s, ok := d.str()
		return &types.AttributeValueMemberN{Value: s}, ok
	case "B":
		b, ok := d.bytes()
		return &types.AttributeValueMemberB{Value: b}, ok
	case "BOOL":
		b, ok := d.literal()
		return &types.AttributeValueMemberBOOL{Value: b}, ok
	case "NULL":
		b, ok := d.literal()
		return &types.AttributeValueMemberNULL{Value: b}, ok
	case "M":
		m, ok := d.item()
		return &types.AttributeValueMemberM{Value: m}, ok
	case "L":
		l := []types.AttributeValue{}
		ok := d.array(func() bool {
			v, ok := d.value()
			l = append(l, v)
			return ok
		})
		return &types.AttributeValueMemberL{Value: l}, ok
	case "SS", "NS":
		ss := []string{}
		ok := d.array(func() bool {
			s, ok := d.str()
			ss = append(ss, s)
			return ok
		})
		if kind == "NS" {
			return &types.AttributeValueMemberNS{Value: ss}, ok
		}
		return &types.AttributeValueMemberSS{Value: ss}, ok
	case "BS":
		bs := [][]byte{}
		ok := d.array(func() bool {
			b, ok := d.bytes()
			bs = append(bs, b)
			return ok
		})
		return &types.AttributeValueMemberBS{Value: bs}, ok
	}
	return nil, false
}

// bytes reads a base64 string.
func (d *decoder) bytes() ([]byte, bool) {
	s, ok := d.str()
	if !ok {
		return nil, false
	}
	b, err := base64.StdEncoding.DecodeString(s)
	return b, err == nil
}

// consumed reads a ConsumedCapacity.
func (d *decoder) consumed() (types.ConsumedCapacity, bool) {
	var c types.ConsumedCapacity
	ok := d.object(func(key string) bool {
		switch key {
		case "TableName":
			s, ok := d.str()
			c.TableName = aws.String(s)
			return ok
		case "Table":
			t, ok := d.capacity()
			c.Table = &t
			return ok
		case "GlobalSecondaryIndexes", "LocalSecondaryIndexes":
			m := map[string]types.Capacity{}
			ok := d.object(func(index string) bool {
				t, ok := d.capacity()
				m[index] = t
				return ok
			})
			if key == "GlobalSecondaryIndexes" {
				c.GlobalSecondaryIndexes = m
			} else {
				c.LocalSecondaryIndexes = m
			}
			return ok
		}
		return d.units(key, &c.CapacityUnits, &c.ReadCapacityUnits, &c.WriteCapacityUnits)
	})
	return c, ok
}

// capacity reads a Capacity.
func (d *decoder) capacity() (types.Capacity, bool) {
	var c types.Capacity
	ok := d.object(func(key string) bool {
		return d.units(key, &c.CapacityUnits, &c.ReadCapacityUnits, &c.WriteCapacityUnits)
	})
	return c, ok
}

// units reads the number of a member named key into the one of its name.
func (d *decoder) units(key string, capacity, read, write **float64) bool {
	var into **float64
	switch key {
	case "CapacityUnits":
		into = capacity
	case "ReadCapacityUnits":
		into = read
	case "WriteCapacityUnits":
		into = write
	default:
		return false
	}
	f, ok := d.number()
	*into = aws.Float64(f)
	return ok
}

// sdkDeserializer is the ID of the SDK's deserializer of an operation.
const sdkDeserializer = "OperationDeserializer"

// Install is the option of a DynamoDB client that installs DecodeBatchGetOnce.
func Install(o *dynamodb.Options) { o.APIOptions = append(o.APIOptions, DecodeBatchGetOnce) }

// DecodeBatchGetOnce puts the decoder of this package in the place of the
// SDK's deserializer of BatchGetItem: an API option of a DynamoDB client
// (Install). Its other operations are left as they are.
func DecodeBatchGetOnce(stack *middleware.Stack) error {
	if stack.ID() != "BatchGetItem" {
		return nil
	}
	sdk, ok := stack.Deserialize.Get(sdkDeserializer)
	if !ok {
		return fmt.Errorf("ddbjson: BatchGetItem has no %s to replace", sdkDeserializer)
	}
	_, err := stack.Deserialize.Swap(sdkDeserializer, batchGetDecoder{sdk})
	return err
}

// batchGetDecoder decodes a successful BatchGetItem response with
// BatchGetItem, and hands the SDK's deserializer the rest.
type batchGetDecoder struct {
	sdk middleware.DeserializeMiddleware
}

func (batchGetDecoder) ID() string { return sdkDeserializer }

func (m batchGetDecoder) HandleDeserialize(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
	middleware.DeserializeOutput, middleware.Metadata, error,
) {
	out, md, err := next.HandleDeserialize(ctx, in)
	if err != nil {
		return out, md, err
	}
	resp, ok := out.RawResponse.(*smithyhttp.Response)
	if !ok || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return m.sdkFrom(ctx, in, out, md)
	}
	body, err := io.ReadAll(resp.Body)
	// With a CRC32 sent, closing the body checks it against what was read
	// (the SDK's checksum middleware wraps the body); without one there is
	// nothing to check.
	if cerr := resp.Body.Close(); err == nil && resp.Header.Get("X-Amz-Crc32") != "" {
		err = cerr
	}
	if err != nil {
		return out, md, &smithy.DeserializationError{Err: fmt.Errorf("failed to read response body, %w", err)}
	}
	if decoded, err := BatchGetItem(body); err == nil {
		out.Result = decoded
		return out, md, nil
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	return m.sdkFrom(ctx, in, out, md)
}

// sdkFrom runs the SDK's deserializer on the response already received.
func (m batchGetDecoder) sdkFrom(ctx context.Context, in middleware.DeserializeInput, out middleware.DeserializeOutput, md middleware.Metadata) (
	middleware.DeserializeOutput, middleware.Metadata, error,
) {
	received := middleware.DeserializeHandlerFunc(func(context.Context, middleware.DeserializeInput) (middleware.DeserializeOutput, middleware.Metadata, error) {
		return out, md, nil
	})
	return m.sdk.HandleDeserialize(ctx, in, received)
}
