package streams

// Creation times as DynamoDB Streams gives them. A record's
// ApproximateCreationDateTime is in seconds, rounded down (the DynamoDB
// Streams API reference); DynamoDB Local stamps its records to the minute,
// so that every record of a minute would fall in that minute's first
// tumbling window, which the clock has closed already: each poll would open
// it again and close it at once, and no window would ever carry its state
// from one invocation to the next.
//
// So the poller stamps each record itself, the first time a poller of this
// process reads it: with the time it read it, to the second, within the
// minute DynamoDB Local gave it (the record was made in that minute, and no
// later than it was read). The stamp is kept by stream and sequence number,
// so that a poller started again, from its checkpoints or from the stream's
// start, puts each record in the window it was in before, as Lambda does.

import (
	"sync"
	"time"
)

// stampsKept bounds the stamps kept; past it, the oldest day's go (the
// stream keeps a record 24 hours in AWS).
const stampsKept = 1 << 20

// stamps are the creation times given, by stream ARN and sequence number.
var stamps = struct {
	mu sync.Mutex
	at map[string]time.Time
}{at: map[string]time.Time{}}

// stamp returns the creation time of the record seq of the stream, made in
// the minute local starts (DynamoDB Local's time), read now: the time the
// first poller read it, to the second, no earlier than local and no later
// than its minute's last second.
func stamp(streamARN, seq string, local, now time.Time) time.Time {
	key := streamARN + "/" + seq
	stamps.mu.Lock()
	defer stamps.mu.Unlock()
	if t, ok := stamps.at[key]; ok {
		return t
	}
	if len(stamps.at) >= stampsKept {
		forget(now.Add(-24 * time.Hour))
	}
	t, last := now.UTC().Truncate(time.Second), local.UTC().Truncate(time.Minute).Add(time.Minute-time.Second)
	switch {
	case t.Before(local):
		t = local.UTC()
	case t.After(last):
		t = last
	}
	stamps.at[key] = t
	return t
}

// forget drops the stamps before t (all of them, if none is); the caller
// holds mu.
func forget(t time.Time) {
	n := len(stamps.at)
	for k, at := range stamps.at {
		if at.Before(t) {
			delete(stamps.at, k)
		}
	}
	if len(stamps.at) == n {
		clear(stamps.at)
	}
}
