// Package trending is an optional feature: Query.trending, the posts most
// liked and commented in the last hour, day and week. Delete this folder and
// the lines that wire it in (docs/layout.md) and the API serves the rest.
//
// The aggregator counts the likes and comments of the table's stream: its
// event source mapping has a tumbling window, Lambda carries the window's
// counts between its invocations as state, and the last one
// (isFinalInvokeForWindow) writes them, by post and five-minute cell of
// their own time, into the buckets (Buckets.Apply):
// a post's counts are written once a window per stream shard, however many
// likes it had. An unlike and a deleted comment (a REMOVE) take theirs back
// from the cell they were counted in.
//
// Exactly once, from an at-least-once stream, whatever an invocation killed
// after any of its writes left and however many records its retry holds: a
// record counts only past the shard's progress (Buckets.Progress, read by
// every invocation) and past the state's last; a flush is written ahead
// (Buckets.BeginFlush: its counts, then its mark as pending), its parts
// applied under its mark (each part keeps the mark of the last flush
// applied from the shard, and skips one not newer), and ended by moving the
// progress (Buckets.SetProgress). An invocation that finds a flush
// pending ends it with that flush's own counts before anything else, and
// drops a state a flush took (recover). Counts are flushed at the window's
// end and each time the state reaches MaxCells (a record that would add a
// cell past it starts a new flush), so that a flush's counts fit one item
// and the state Lambda's 1 MB; a window Lambda ends early
// (isWindowTerminatedEarly) is flushed as its end.
package trending

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/example/appsync-dynamo/lambda/projector"
	"github.com/example/appsync-dynamo/lambda/store"
)

// Store is what the aggregator needs of the table.
type Store interface {
	Progress(ctx context.Context, shardID string) (Progress, error)
	BeginFlush(ctx context.Context, shardID string, f Flush) error
	Apply(ctx context.Context, shardID, mark string, counts map[Cell]Count) error
	SetProgress(ctx context.Context, shardID, seq string) error
}

// MaxCells bounds the cells a window's state holds, and so a flush: at
// most about 95 bytes each in the state's JSON (a 64-character post ID,
// six-digit counts), 4,000 are 380 kB, within both Lambda's 1 MB of state
// and DynamoDB's 400 kB item, which holds a flush's counts while it is
// applied.
const MaxCells = 4000

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
// records or more, and nothing is counted twice or lost (recover).
func (a *Aggregator) Handle(ctx context.Context, ev events.DynamoDBTimeWindowEvent) (events.DynamoDBTimeWindowEventResponse, error) {
	st, err := decodeState(ev.State)
	if err != nil {
		a.log.Error("the window's state cannot be read: starting it again", "shard", ev.ShardID, "cause", err.Error())
		st = state{}
	}
	if err := a.recover(ctx, ev.ShardID, &st); err != nil {
		return events.DynamoDBTimeWindowEventResponse{}, err
	}
	for _, r := range ev.Records {
		seq := PadSequence(r.Change.SequenceNumber)
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

// recover reads the shard's progress, at every invocation: Lambda tells no
// invocation that it is a retry, and an earlier attempt may have flushed
// (all of the state and more, never part of it: a flush takes the whole
// state) or died within a flush. A flush begun and not ended is ended
// first, with its own counts, under its own mark (each part it applied
// already is not applied again). Then the state's counts are dropped if a
// flush took them, and only records after the progress count.
func (a *Aggregator) recover(ctx context.Context, shardID string, st *state) error {
	progress, err := a.store.Progress(ctx, shardID)
	if err != nil {
		return err
	}
	if f := progress.Pending; f != nil {
		counts, err := decodeCells(f.Counts)
		if err != nil {
			return fmt.Errorf("the pending flush's counts of shard %s: %w", shardID, err)
		}
		a.log.Warn("ending the flush an earlier attempt began", "shard", shardID, "first", f.First, "last", f.Last, "cells", len(counts))
		if err := a.apply(ctx, shardID, f.First, f.Last, counts); err != nil {
			return err
		}
		progress.Seq = max(progress.Seq, f.Last)
	}
	st.from = max(st.from, progress.Seq)
	switch {
	case st.first == "" || st.from < st.first: // none of the state's records flushed
	case st.last <= st.from: // flushed by an attempt that died before its answer
		st.cells, st.first = nil, ""
	default: // a flush never takes part of a state: two consumers of one shard?
		a.log.Error("the shard's progress is within the window's state: its counts are dropped",
			"shard", shardID, "progress", st.from, "first", st.first, "last", st.last, "cells", len(st.cells))
		st.cells, st.first = nil, ""
	}
	st.last = max(st.last, st.from)
	return nil
}

// flush applies the state's counts as one flush (Buckets.BeginFlush,
// then its parts under the mark of its first record, then the progress),
// or, when it counted nothing, records the progress; it empties the
// state's counts.
func (a *Aggregator) flush(ctx context.Context, shardID string, st *state) error {
	if len(st.cells) > 0 {
		f := Flush{First: st.first, Last: st.last, Counts: encodeCells(st.cells)}
		if err := a.store.BeginFlush(ctx, shardID, f); err != nil {
			return err
		}
		if err := a.apply(ctx, shardID, st.first, st.last, st.cells); err != nil {
			return err
		}
	} else if st.last > st.from {
		if err := a.store.SetProgress(ctx, shardID, st.last); err != nil {
			return err
		}
	}
	a.log.Info("trending counts applied", "shard", shardID, "cells", len(st.cells), "first", st.first, "last", st.last)
	st.cells, st.first, st.from = nil, "", max(st.from, st.last)
	return nil
}

// apply applies a begun flush's counts and ends it.
func (a *Aggregator) apply(ctx context.Context, shardID, first, last string, counts map[Cell]Count) error {
	if err := a.store.Apply(ctx, shardID, first, counts); err != nil {
		return err
	}
	return a.store.SetProgress(ctx, shardID, last)
}

// counted returns the cell a record counts in and by how much: +1 for a
// like or a comment made (INSERT), -1 for one removed (REMOVE), each at its
// own time; false for anything else (a marker, a change, a malformed item).
func counted(r events.DynamoDBEventRecord) (Cell, Count, bool) {
	sk := r.Change.Keys[store.AttrSK].String()
	var image map[string]events.DynamoDBAttributeValue
	delta := 1
	switch r.EventName {
	case string(events.DynamoDBOperationTypeInsert):
		image = r.Change.NewImage
	case string(events.DynamoDBOperationTypeRemove):
		image, delta = r.Change.OldImage, -1
	default:
		return Cell{}, Count{}, false
	}
	timeAttr, count := "", Count{}
	switch {
	case store.IsLikeSK(sk):
		timeAttr, count.Likes = "likedAt", delta
	case store.IsCommentSK(sk):
		timeAttr, count.Comments = "createdAt", delta
	default:
		return Cell{}, Count{}, false
	}
	postID, at := projector.ImageString(image, "postId"), projector.ImageString(image, timeAttr)
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil || !store.ValidID(postID) {
		return Cell{}, Count{}, false
	}
	return CellOf(postID, t), count, true
}

// state is a window's state between its invocations.
type state struct {
	from        string // records at or before it are applied (padded): the shard's progress
	first, last string // the first record in cells, and the last record read (padded)
	cells       map[Cell]Count
}

func (st *state) add(seq string, cell Cell, delta Count) {
	if st.cells == nil {
		st.cells = map[Cell]Count{}
	}
	c := st.cells[cell]
	st.cells[cell] = Count{Likes: c.Likes + delta.Likes, Comments: c.Comments + delta.Comments}
	if st.first == "" {
		st.first = seq
	}
	st.last = seq
}

// encode returns the state as Lambda carries it: strings, the cells as
// encodeCells writes them.
func (st state) encode() map[string]string {
	return map[string]string{"from": st.from, "first": st.first, "last": st.last, "cells": encodeCells(st.cells)}
}

func decodeState(m map[string]string) (state, error) {
	if len(m) == 0 {
		return state{}, nil
	}
	cells, err := decodeCells(m["cells"])
	if err != nil {
		return state{}, err
	}
	return state{from: m["from"], first: m["first"], last: m["last"], cells: cells}, nil
}

// encodeCells writes counts as a JSON object of "<cell start, Unix
// seconds>/<post ID>" to [likes, comments]: the window's state, and a
// pending flush's counts in the table.
func encodeCells(counts map[Cell]Count) string {
	cells := make(map[string][2]int, len(counts))
	for c, n := range counts {
		cells[strconv.FormatInt(c.Start.Unix(), 10)+"/"+c.PostID] = [2]int{n.Likes, n.Comments}
	}
	raw, _ := json.Marshal(cells) // a map of strings to int pairs always encodes
	return string(raw)
}

func decodeCells(raw string) (map[Cell]Count, error) {
	var cells map[string][2]int
	if err := json.Unmarshal([]byte(raw), &cells); err != nil {
		return nil, err
	}
	out := make(map[Cell]Count, len(cells))
	for k, n := range cells {
		start, postID, _ := strings.Cut(k, "/")
		unix, err := strconv.ParseInt(start, 10, 64)
		if err != nil {
			return nil, err
		}
		out[Cell{PostID: postID, Start: time.Unix(unix, 0).UTC()}] = Count{Likes: n[0], Comments: n[1]}
	}
	return out, nil
}
