package store

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/example/appsync-dynamo/lambda/cursor"
)

// What a feature's own table code builds on (lambda/feed): the client and
// table (API, Table), the clock (Now), the tokens' codec, the batched reads
// and writes (BatchGet, BatchWrite), a range read to its end (QueryAll), a post decoded with its counts
// (DecodePost, AddCounters) and a page built from what it read (NewPage,
// Page.Fit). A feature owns its items' keys and requests; the core's
// entities it reads through these, so that their counts (hot ones' too)
// and partial reads stay the core's.

// Tokens is the codec the store signs its pagination tokens with: a
// feature's connection signs its own with it, under a scope of its own.
func (s *Store) Tokens() *cursor.Codec { return s.tokens }

// DecodePost decodes a post's own item, read with attrs (nil: all of it),
// adding the counts of its counter item (nil: none read) with its parts'
// tallies as the store's Spread counts them, as every read of a post's
// counts does.
func (s *Store) DecodePost(op string, attrs []string, item, counter map[string]types.AttributeValue) (Post, error) {
	var p Post
	if err := unmarshal(op, item, &p); err != nil {
		return Post{}, err
	}
	if counter != nil {
		var c Post
		if err := unmarshal(op, counter, &c); err != nil {
			return Post{}, err
		}
		c.Hot = s.tallies(stringAttr(counter, AttrPK), c.Hot)
		p.add(c)
	}
	readOnly(&p, attrs)
	return p, nil
}
