package capacity

import (
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Key is where units land: a partition key of the table ("" Index) or of
// an index.
type Key struct {
	Index string // "" for the table
	PK    string
}

func (k Key) String() string {
	if k.Index == "" {
		return k.PK
	}
	return k.Index + " " + k.PK
}

// Units are read and write capacity units.
type Units struct{ Read, Write float64 }

func (u Units) add(v Units) Units { return Units{u.Read + v.Read, u.Write + v.Write} }

// Rules cost a request: the units it consumes on each partition key.
type Rules interface {
	Cost(Request) map[Key]Units
}

// Documented is DynamoDB's documented accounting:
//   - an item's size is the sum of its attribute names' and values' sizes
//     (Size);
//   - a read costs 1 unit per 4 KB strongly consistent, half that eventually
//     consistent: a GetItem or each key of a BatchGetItem on its item's size
//     rounded up (an absent item as 4 KB), a Query on the total size of the
//     items it read rounded up once (at least one 4 KB block, even when it
//     reads nothing), whatever its projection or filter;
//   - a write costs 1 unit per 1 KB of the larger of the item's size before
//     and after, rounded up (at least 1); a transactional write twice that,
//     and a ConditionCheck in a transaction as a transactional write of the
//     item it checks (conservatively: on the partition it checks);
//   - a write also writes each index whose keys the item carries before or
//     after, on that index's partition: an entry put, deleted, or updated
//     (its size before or after, the larger), or, when its index key
//     changed, deleted from one partition and put on the other; nothing when
//     the entry is unchanged. Every index here projects ALL, so an entry is
//     the whole item;
//   - a refused write (Failed) is not costed (DynamoDB charges a failed
//     conditional write; the workloads here have none).
type Documented struct{}

// Local is DynamoDB Local's accounting (2.x), where it differs from the
// documented one, as measured (TestLocalReportsWhatTheModelCosts):
//   - a transaction costs 4 units per 1 KB, not 2, and its items are
//     counted once per distinct cost: two items that each cost the same
//     units on the table and on each index count once (three 10-byte Puts
//     cost 4 units, not 12); a ConditionCheck costs as a 1 KB item, whatever
//     the size of the item it checks;
//   - a Query that reads nothing costs nothing;
//   - a BatchWriteItem's delete of an absent item costs 2 units, not 1;
//   - a BatchGetItem's key of an absent item costs nothing (a GetItem's
//     costs a block).
type Local struct{}

const (
	readBlock  = 4096
	writeBlock = 1024
)

func blocks(size, block int) float64 { return math.Ceil(float64(max(size, 1)) / float64(block)) }

func readUnits(size int, consistent bool) float64 {
	if consistent {
		return blocks(size, readBlock)
	}
	return blocks(size, readBlock) / 2
}

func (Documented) Cost(r Request) map[Key]Units { return cost(r, false) }
func (Local) Cost(r Request) map[Key]Units      { return cost(r, true) }

func cost(r Request, local bool) map[Key]Units {
	out := map[Key]Units{}
	if r.Failed {
		return out
	}
	land := func(k Key, u Units) { out[k] = out[k].add(u) }
	switch r.Operation {
	case "GetItem", "BatchGetItem":
		for _, rd := range r.Reads {
			size := readBlock
			if rd.Found {
				size = Size(rd.Item)
			} else if local && r.Operation == "BatchGetItem" {
				continue
			}
			land(Key{PK: rd.PK}, Units{Read: readUnits(size, r.Consistent)})
		}
	case "Query":
		total := 0
		for _, rd := range r.Reads {
			total += Size(rd.Item)
		}
		if total == 0 && local {
			return out
		}
		pk := r.PK // an empty Query's too (documented: at least one block)
		if pk == "" && len(r.Reads) > 0 {
			pk = r.Reads[0].PK
		}
		land(Key{r.Index, pk}, Units{Read: readUnits(total, r.Consistent)})
	case "BatchWriteItem", "UpdateItem":
		for _, w := range r.Writes {
			for k, u := range writeUnits(w) {
				if local && r.Operation == "BatchWriteItem" && w.Before == nil && w.After == nil {
					u *= 2
				}
				land(k, Units{Write: u})
			}
		}
	case "TransactWriteItems":
		if local {
			seen := map[string]bool{}
			for _, w := range r.Writes {
				units := writeUnits(w)
				if w.Check {
					units = map[Key]float64{{PK: w.PK}: 1}
				}
				if id := distinct(units); !seen[id] {
					seen[id] = true
					for k, u := range units {
						land(k, Units{Write: 4 * u})
					}
				}
			}
			return out
		}
		for _, w := range r.Writes {
			if w.Check {
				land(Key{PK: w.PK}, Units{Write: 2 * blocks(Size(w.Before), writeBlock)})
				continue
			}
			for k, u := range writeUnits(w) {
				land(k, Units{Write: 2 * u})
			}
		}
	default:
		panic("capacity: no rule for " + r.Operation)
	}
	return out
}

// distinct identifies an item's cost by its units on the table and each
// index, whatever the partitions.
func distinct(units map[Key]float64) string {
	by := map[string]float64{}
	for k, u := range units {
		by[k.Index] += u
	}
	var b strings.Builder
	for _, ix := range append([]string{""}, indexNames()...) {
		fmt.Fprintf(&b, "%s=%g;", ix, by[ix])
	}
	return b.String()
}

func indexNames() []string {
	var names []string
	for _, ix := range store.Schema.Indexes {
		names = append(names, ix.Name)
	}
	return names
}

// writeUnits are the standard (not transactional) write units of one item
// written, on the table and on each index, by partition.
func writeUnits(w Write) map[Key]float64 {
	out := map[Key]float64{{PK: w.PK}: blocks(max(Size(w.Before), Size(w.After)), writeBlock)}
	for _, ix := range store.Schema.Indexes {
		was, is := attr(w.Before, ix.Keys.PartitionKey), attr(w.After, ix.Keys.PartitionKey)
		wasKey := was != "" && attr(w.Before, ix.Keys.SortKey) != ""
		isKey := is != "" && attr(w.After, ix.Keys.SortKey) != ""
		switch {
		case wasKey && isKey && was == is && attr(w.Before, ix.Keys.SortKey) == attr(w.After, ix.Keys.SortKey):
			if !equal(w.Before, w.After) {
				out[Key{ix.Name, is}] += blocks(max(Size(w.Before), Size(w.After)), writeBlock)
			}
		default:
			if wasKey {
				out[Key{ix.Name, was}] += blocks(Size(w.Before), writeBlock)
			}
			if isKey {
				out[Key{ix.Name, is}] += blocks(Size(w.After), writeBlock)
			}
		}
	}
	return out
}

// Size is an item's size by DynamoDB's rules: each attribute's name (UTF-8
// bytes) and value: a string's UTF-8 bytes, a binary's bytes, a number's 1
// byte per two significant digits plus 1, a Boolean or null 1 byte, a list
// or map 3 bytes plus 1 per element and the elements (a map's names too), a
// set its elements.
func Size(item Item) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return len(v.Value)
	case *types.AttributeValueMemberN:
		return numberSize(v.Value)
	case *types.AttributeValueMemberB:
		return len(v.Value)
	case *types.AttributeValueMemberBOOL, *types.AttributeValueMemberNULL:
		return 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range v.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range v.Value {
			n += 1 + len(k) + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberSS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	case *types.AttributeValueMemberNS:
		n := 0
		for _, e := range v.Value {
			n += numberSize(e)
		}
		return n
	case *types.AttributeValueMemberBS:
		n := 0
		for _, e := range v.Value {
			n += len(e)
		}
		return n
	}
	return 0
}

func numberSize(s string) int {
	s = strings.TrimLeft(strings.TrimPrefix(s, "-"), "0")
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	digits := strings.Trim(strings.Replace(s, ".", "", 1), "0")
	return (len(digits)+1)/2 + 1
}

// equal reports whether two items hold the same attributes and values.
func equal(a, b Item) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !reflect.DeepEqual(v, w) {
			return false
		}
	}
	return true
}
