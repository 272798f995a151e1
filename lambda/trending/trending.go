// Package trending counts the likes and comments of the table's stream for
// Query.trending (store.Trending): its event source mapping has a tumbling
// window, Lambda carries the window's counts between its invocations as
// state, and the last one (isFinalInvokeForWindow) writes them, by post and
// five-minute cell of their own time, into the buckets (store.ApplyTrend):
// a post's counts are written once a window per stream shard, however many
// likes it had. An unlike and a deleted comment (a REMOVE) take theirs back
// from the cell they were counted in.
//
// Exactly once, from an at-least-once stream: a record is counted once in a
// window's state (its sequence number past the state's last, and past the
// shard's progress as the window started, store.TrendProgress), and a
// window's counts are applied once (each bucket's part keeps the mark of
// the last window applied from the shard). Counts are flushed at
// deterministic points, the window's end and each time the state reaches
// MaxCells (a record that would add a cell past it starts a new flush), so
// that a batch retried, bisected or not, flushes the same counts under the
// same mark; the state then stays under Lambda's 1 MB, and a window Lambda
// ends early anyway (isWindowTerminatedEarly) is flushed as its end.
package trending

import (
	"context"
	"encoding/json"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/store"
)

// Store is what the aggregator needs of the table.
type Store interface {
	ApplyTrend(ctx context.Context, shardID, mark string, counts map[store.TrendCell]store.TrendCount) error
	TrendProgress(ctx context.Context, shardID string) (string, error)
	SetTrendProgress(ctx context.Context, shardID, seq string) error
}

// MaxCells bounds the cells a window's state holds (about 45 bytes each in
// the state's JSON: 15,000 are 700 kB of Lambda's 1 MB).
const MaxCells = 15000

// Aggregator applies stream records to the trending buckets.
type Aggregator struct {
	store    Store
	log      *slog.Logger
	maxCells int
}

// Option configures an Aggregator.
type Option func(*Aggregator)

// WithMaxCells sets the cells a state holds before it is flushed (tests use
// a small one).
func WithMaxCells(n int) Option { return func(a *Aggregator) { a.maxCells = n } }

// New returns an aggregator writing to s.
func New(s Store, log *slog.Logger, opts ...Option) *Aggregator {
	a := &Aggregator{store: s, log: log, maxCells: MaxCells}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Handle counts the records into the window's state, flushing it where
// MaxCells is reached and at the window's end. Any failure fails the
// invocation: Lambda invokes again with the state it had, and the same
// records, and the flushes already made are not made twice.
func (a *Aggregator) Handle(ctx context.Context, ev events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error) {
	st, err := decodeState(ev.State)
	if err != nil {
		a.log.Error("the window's state cannot be read: starting it again", "shard", ev.ShardID, "cause", err.Error())
		st = state{}
	}
	if !st.started {
		if st.from, err = a.store.TrendProgress(ctx, ev.ShardID); err != nil {
			return events.DynamoDBTimeWindowEventResponse{}, err
		}
		st.started = true
	}
	for _, r := range ev.Records {
		seq := store.PadSequence(r.Change.SequenceNumber)
		if seq <= st.from || seq <= st.last {
			continue // counted before
		}
		cell, delta, ok := counted(r)
		if !ok {
			st.last = seq
			continue
		}
		if _, known := st.cells[cell]; !known && len(st.cells) >= a.maxCells {
			if err := a.flush(ctx, ev.ShardID, &st); err != nil {
				return events.DynamoDBTimeWindowEventResponse{}, err
			}
		}
		st.add(seq, cell, delta)
	}
	if ev.IsFinalInvokeForWindow || ev.IsWindowTerminatedEarly {
		if err := a.flush(ctx, ev.ShardID, &st); err != nil {
			return events.DynamoDBTimeWindowEventResponse{}, err
		}
		return events.DynamoDBTimeWindowEventResponse{TimeWindowEventResponseProperties: events.TimeWindowEventResponseProperties{State: map[string]string{}}}, nil
	}
	return events.DynamoDBTimeWindowEventResponse{TimeWindowEventResponseProperties: events.TimeWindowEventResponseProperties{State: st.encode()}}, nil
}

// flush applies the state's counts under the mark of its first record,
// records the shard's progress, and empties the state's counts.
func (a *Aggregator) flush(ctx context.Context, shardID string, st *state) error {
	if len(st.cells) > 0 {
		if err := a.store.ApplyTrend(ctx, shardID, st.first, st.cells); err != nil {
			return err
		}
	}
	if st.last != "" && st.last > st.from {
		if err := a.store.SetTrendProgress(ctx, shardID, st.last); err != nil {
			return err
		}
	}
	a.log.Info("trending counts applied", "shard", shardID, "cells", len(st.cells), "first", st.first, "last", st.last)
	st.cells, st.first = nil, ""
	if st.last > st.from {
		st.from = st.last
	}
	return nil
}

// counted returns the cell a record counts in and by how much: +1 for a
// like or a comment made (INSERT), -1 for one removed (REMOVE), each at its
// own time; false for anything else (a marker, a change, a malformed item).
func counted(r events.DynamoDBEventRecord) (store.TrendCell, store.TrendCount, bool) {
	sk := r.Change.Keys[store.AttrSK].String()
	var image map[string]events.DynamoDBAttributeValue
	delta := 1
	switch r.EventName {
	case string(events.DynamoDBOperationTypeInsert):
		image = r.Change.NewImage
	case string(events.DynamoDBOperationTypeRemove):
		image, delta = r.Change.OldImage, -1
	default:
		return store.TrendCell{}, store.TrendCount{}, false
	}
	timeAttr, count := "", store.TrendCount{}
	switch {
	case store.IsLikeSK(sk):
		timeAttr, count.Likes = "likedAt", delta
	case store.IsCommentSK(sk):
		timeAttr, count.Comments = "createdAt", delta
	default:
		return store.TrendCell{}, store.TrendCount{}, false
	}
	postID, at := stringAttr(image, "postId"), stringAttr(image, timeAttr)
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || !store.ValidID(postID) {
		return store.TrendCell{}, store.TrendCount{}, false
	}
	return store.TrendCellOf(postID, t), count, true
}

func stringAttr(image map[string]events.DynamoDBAttributeValue, name string) string {
	v, ok := image[name]
	if !ok || v.DataType() != events.DataTypeString {
		return ""
	}
	return v.String()
}

// state is a window's state between its invocations.
type state struct {
	started     bool   // the shard's progress was read
	from        string // records at or before it are counted (padded)
	first, last string // the first and last record in cells (padded)
	cells       map[store.TrendCell]store.TrendCount
}

func (st *state) add(seq string, cell store.TrendCell, delta store.TrendCount) {
	if st.cells == nil {
		st.cells = map[store.TrendCell]store.TrendCount{}
	}
	c := st.cells[cell]
	st.cells[cell] = store.TrendCount{Likes: c.Likes + delta.Likes, Comments: c.Comments + delta.Comments}
	if st.first == "" {
		st.first = seq
	}
	st.last = seq
}

// encode returns the state as Lambda carries it: strings, the cells as a
// JSON object of "<cell start, Unix seconds>/<post ID>" to [likes,
// comments].
func (st state) encode() map[string]string {
	cells := make(map[string][2]int, len(st.cells))
	for c, n := range st.cells {
		cells[strconv.FormatInt(c.Start.Unix(), 10)+"/"+c.PostID] = [2]int{n.Likes, n.Comments}
	}
	raw, _ := json.Marshal(cells) // a map of strings to int pairs always encodes
	return map[string]string{"from": st.from, "first": st.first, "last": st.last, "cells": string(raw)}
}

func decodeState(m map[string]string) (state, error) {
	if len(m) == 0 {
		return state{}, nil
	}
	st := state{started: true, from: m["from"], first: m["first"], last: m["last"]}
	var cells map[string][2]int
	if err := json.Unmarshal([]byte(m["cells"]), &cells); err != nil {
		return state{}, err
	}
	st.cells = make(map[store.TrendCell]store.TrendCount, len(cells))
	for k, n := range cells {
		start, postID, _ := strings.Cut(k, "/")
		unix, err := strconv.ParseInt(start, 10, 64)
		if err != nil {
			return state{}, err
		}
		st.cells[store.TrendCell{PostID: postID, Start: time.Unix(unix, 0).UTC()}] = store.TrendCount{Likes: n[0], Comments: n[1]}
	}
	return st, nil
}
