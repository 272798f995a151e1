// Package realtime serves GraphQL subscriptions over AWS AppSync's real-time
// WebSocket protocol, for the local API: a client connects with the
// subprotocol "graphql-ws" and the query parameters header (base64 JSON:
// host and Authorization or x-api-key) and payload (base64 "{}"), sends
// connection_init (answered by connection_ack with connectionTimeoutMs, then
// a "ka" keep-alive at intervals), registers subscriptions with start
// (answered by start_ack, or by error), receives a data message for each
// publication that matches, and ends one with stop (answered by complete).
//
// Publications come from mutations (Hub.Publish, called by the executor):
// a subscription field with @aws_subscribe(mutations: [...]) receives the
// result of each listed mutation, as the mutation selected it, when its own
// arguments equal the result's fields of the same names; of it, the
// subscriber gets the fields it selected. As in AppSync, a field the
// mutation did not select is null, and an error when it cannot be.
package realtime

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/example/appsync-dynamo/lambda/appsync"
	"github.com/example/appsync-dynamo/lambda/resolver"
	"github.com/example/appsync-dynamo/local/executor"
)

// ConnectionTimeout is the connectionTimeoutMs of connection_ack: how long a
// client waits for a keep-alive before it gives the connection up.
const ConnectionTimeout = 5 * time.Minute

// Identify turns a request's authorization headers (Authorization or
// x-api-key) into the caller: nil for an API-key caller.
type Identify func(headers map[string]string) (*appsync.Identity, error)

// Authorize reports whether the caller may read field of typ (the API's
// authorization directives).
type Authorize func(typ *ast.Definition, field *ast.FieldDefinition, caller *appsync.Identity) bool

// Resolve runs the resolver of a subscription field as a subscription to it
// starts, as AppSync runs a subscription resolver: a *Refusal refuses the
// subscription (any other error too, as an internal failure); the filters
// it set narrow what the subscription receives and what invalidates it.
type Resolve func(ctx context.Context, field *ast.Field, args map[string]any, caller *appsync.Identity) (Filters, error)

// Filters are what a subscription resolver's response handler set, as
// filterJsonObjects (JSON-shaped; nil for none): Filter
// (extensions.setSubscriptionFilter) and Invalidation
// (extensions.setSubscriptionInvalidationFilter).
type Filters struct{ Filter, Invalidation any }

// Refusal is a subscription resolver's GraphQL error: the subscription is
// refused with its type and message.
type Refusal struct{ Type, Message string }

func (r *Refusal) Error() string { return r.Type + ": " + r.Message }

// FilterReading is how AppSync treats a subscription's arguments once its
// resolver has set an enhanced filter, which AWS does not document: still
// matched against what is published (ArgumentsAndFilter), or left to the
// filter (FilterAlone). The local AppSync offers both, and the tests run
// under each.
type FilterReading int

const (
	ArgumentsAndFilter FilterReading = iota
	FilterAlone
)

func (r FilterReading) String() string {
	if r == FilterAlone {
		return "filter-alone"
	}
	return "arguments-and-filter"
}

// Hub holds the subscriptions of every connection and delivers publications.
type Hub struct {
	schema    *ast.Schema
	identify  Identify
	authorize Authorize
	// Resolve, when set before the first connection, runs the subscription
	// fields' resolvers (none run without it: the fields' arguments alone
	// filter).
	Resolve Resolve
	// Filtering is the reading of a filtered subscription's arguments
	// (ArgumentsAndFilter unless set before the first publication).
	Filtering FilterReading
	// Messages is how a data message is written and measured against
	// AppSync's 240 KB (UTF8Of245760 unless set before the first
	// publication): a subscriber whose message would pass it receives
	// nothing.
	Messages MessageReading

	dropped atomic.Int64 // deliveries past the Messages reading's limit
	// KeepAlive is the interval of "ka" messages (a minute unless set
	// before the first connection).
	KeepAlive time.Duration
	// ClientLimit is the most bytes of a client's message the endpoint
	// reads (ClientLimits[0] when 0): past it, the connection is closed
	// with 1009, message too big.
	ClientLimit int64
	// FieldLimit bounds the fields a subscription's selection holds, every
	// alias and level counted, as the API's resolverCountLimit bounds the
	// resolvers a query runs (resolver.ResolverCountLimit unless set
	// before the first start): past it, the start is refused.
	FieldLimit int
	// DepthLimit bounds a subscription's selection as the API's
	// queryDepthLimit bounds a query's (resolver.QueryDepthLimit unless set
	// before the first start): deeper, the start is refused.
	DepthLimit int

	mu   sync.Mutex
	subs map[*subscription]struct{}

	jobsMu  sync.Mutex
	jobs    []func() // deliveries, in the order of their publications
	working bool     // a goroutine runs jobs
}

// New returns a Hub for schema's subscriptions.
func New(schema *ast.Schema, identify Identify, authorize Authorize) *Hub {
	return &Hub{schema: schema, identify: identify, authorize: authorize, KeepAlive: time.Minute, DepthLimit: resolver.QueryDepthLimit, FieldLimit: resolver.ResolverCountLimit, subs: map[*subscription]struct{}{}}
}

// subscription is one started subscription field of a connection.
type subscription struct {
	conn         *connection
	id           string
	field        *ast.Field // the root field, with its selection
	op           *executor.Operation
	args         map[string]any
	collected    collected // its fields' fields, collected once (the deliveries' goroutine's)
	filter       *Filter   // its resolver's enhanced filter (nil: none)
	invalidation *Filter   // its resolver's invalidation filter (nil: none)
}

type connection struct {
	ws      *websocket.Conn
	ctx     context.Context
	cancel  context.CancelFunc
	out     chan []byte  // messages to write, in order, by one writer
	pending atomic.Int64 // bytes in out
	caller  *appsync.Identity
	ids     map[string]*subscription // its started subscriptions by id (the Hub's mu)
}

// ClientLimits are the readings of how large a client's message AppSync
// takes, which it does not document for GraphQL subscriptions: API
// Gateway's WebSocket frame quota, 32 KB (whose documented close is the
// same 1009), the stricter and the local default; and AppSync's own 240 KB,
// its limit on the messages it sends. make dev CLIENT_LIMIT= picks one,
// make smoke tells a deployed API's (docs/live.md).
var ClientLimits = []int64{32 << 10, 240 << 10}

// MaxSubscriptions is AppSync's quota of subscriptions on one connection
// (docs/live.md); the next start is refused MaxSubscriptionsReachedError.
const MaxSubscriptions = 100

// MaxPending is the most bytes of messages a connection may have waiting
// for its client: past it, the client is not reading, and is disconnected.
// A burst of publications a reading client takes at the network's pace
// stays far under it.
const MaxPending = 8 << 20

// maxQueued is the most messages a connection may have waiting.
const maxQueued = 1 << 14

// send queues v for the connection's writer. It never blocks a mutation: a
// client that does not take its messages (more than MaxPending bytes, or
// maxQueued messages, waiting) is disconnected, and no other slowed.
func (c *connection) send(v any) {
	b, err := json.Marshal(v)
	if err == nil {
		c.sendRaw(b)
	}
}

// sendRaw is send of a message already encoded.
func (c *connection) sendRaw(b []byte) {
	if c.pending.Add(int64(len(b))) > MaxPending {
		c.cancel()
		return
	}
	select {
	case c.out <- b:
	case <-c.ctx.Done():
	default:
		c.cancel()
	}
}

// write writes the queued messages until the connection ends.
func (c *connection) write() {
	for {
		select {
		case <-c.ctx.Done():
			return
		case b := <-c.out:
			err := c.ws.Write(c.ctx, websocket.MessageText, b)
			c.pending.Add(-int64(len(b)))
			if err != nil {
				c.cancel()
				return
			}
		}
	}
}

// message is a protocol message, both ways.
type message struct {
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// gqlError is an error in an error or data message.
type gqlError struct {
	ErrorType string `json:"errorType,omitempty"`
	Message   string `json:"message"`
}

func errorMessage(id, errType, text string) map[string]any {
	m := map[string]any{"type": "error", "payload": map[string]any{"errors": []gqlError{{ErrorType: errType, Message: text}}}}
	if id != "" {
		m["id"] = id
	}
	return m
}

// ServeHTTP accepts a WebSocket connection and serves it until it closes.
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	headers, err := decodeParam(r.URL.Query().Get("header"))
	if err != nil {
		http.Error(w, "the header query parameter must be base64 JSON", http.StatusBadRequest)
		return
	}
	caller, err := h.identify(headers)
	if err != nil {
		http.Error(w, err.Error(), http.StatusUnauthorized)
		return
	}
	ws, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"graphql-ws"}, InsecureSkipVerify: true})
	if err != nil {
		return
	}
	defer ws.CloseNow()
	ws.SetReadLimit(cmp.Or(h.ClientLimit, ClientLimits[0]))
	if ws.Subprotocol() != "graphql-ws" {
		ws.Close(websocket.StatusPolicyViolation, "the subprotocol must be graphql-ws")
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	c := &connection{ws: ws, ctx: ctx, cancel: cancel, out: make(chan []byte, maxQueued), caller: caller, ids: map[string]*subscription{}}
	defer h.drop(c)
	go c.write()
	for {
		_, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
		var m message
		if json.Unmarshal(data, &m) != nil {
			c.send(errorMessage("", "BadRequest", "a message must be a JSON object with a type"))
			continue
		}
		switch m.Type {
		case "connection_init":
			c.send(map[string]any{"type": "connection_ack", "payload": map[string]any{"connectionTimeoutMs": ConnectionTimeout.Milliseconds()}})
			go h.keepAlive(c)
		case "start":
			h.start(c, m)
		case "stop":
			h.stop(c, m.ID)
			c.send(map[string]any{"type": "complete", "id": m.ID})
		default:
			c.send(errorMessage(m.ID, "UnsupportedOperation", fmt.Sprintf("unknown message type %q", m.Type)))
		}
	}
}

func (h *Hub) keepAlive(c *connection) {
	c.send(map[string]string{"type": "ka"})
	t := time.NewTicker(h.KeepAlive)
	defer t.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return
		case <-t.C:
			c.send(map[string]string{"type": "ka"})
		}
	}
}

// decodeParam decodes a base64 JSON query parameter ("" is {}).
func decodeParam(v string) (map[string]string, error) {
	out := map[string]string{}
	if v == "" {
		return out, nil
	}
	b, err := base64.StdEncoding.DecodeString(v)
	if err != nil {
		if b, err = base64.URLEncoding.DecodeString(v); err != nil {
			return nil, err
		}
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	for k, v := range m {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out, nil
}

// start registers the subscription of a start message, or answers an error.
func (h *Hub) start(c *connection, m message) {
	var p struct {
		Data       string `json:"data"`
		Extensions struct {
			Authorization map[string]string `json:"authorization"`
		} `json:"extensions"`
	}
	var req struct {
		Query         string         `json:"query"`
		Variables     map[string]any `json:"variables"`
		OperationName string         `json:"operationName"`
	}
	if m.ID == "" || json.Unmarshal(m.Payload, &p) != nil || json.Unmarshal([]byte(p.Data), &req) != nil {
		c.send(errorMessage(m.ID, "BadRequest", "start needs an id and a payload whose data is a JSON GraphQL request"))
		return
	}
	if err := h.room(c, m.ID); err != nil {
		c.send(errorMessage(m.ID, err.Type, err.Message))
		return
	}
	caller := c.caller
	if len(p.Extensions.Authorization) > 0 {
		id, err := h.identify(p.Extensions.Authorization)
		if err != nil {
			c.send(errorMessage(m.ID, "UnauthorizedException", err.Error()))
			return
		}
		caller = id
	}
	if exp, ok := Expiry(caller); ok && !time.Now().Before(exp) {
		c.send(errorMessage(m.ID, "UnauthorizedException", TokenExpired))
		return
	}
	doc, errs := executor.Parse(h.schema, req.Query)
	if len(errs) > 0 {
		c.send(errorMessage(m.ID, "GraphQLError", errs[0].Message))
		return
	}
	op := doc.Operations.ForName(req.OperationName)
	if op == nil || op.Operation != ast.Subscription {
		c.send(errorMessage(m.ID, "UnsupportedOperation", "start takes a subscription"))
		return
	}
	prepared, err := executor.Prepare(h.schema, doc, op, req.Variables)
	if err != nil {
		c.send(errorMessage(m.ID, "GraphQLError", err.Error()))
		return
	}
	// Validation leaves at most one root field (one response key:
	// SingleRootKey); one skipped subscribes to nothing, under its id.
	fields := prepared.Fields(h.schema.Subscription, op.SelectionSet)
	if len(fields) == 0 {
		h.mu.Lock()
		c.ids[m.ID] = &subscription{conn: c, id: m.ID}
		h.mu.Unlock()
		c.send(map[string]any{"type": "start_ack", "id": m.ID})
		return
	}
	f := fields[0]
	if msg := prepared.NullArgument(f); msg != "" {
		c.send(errorMessage(m.ID, "ValidationError", msg))
		return
	}
	if depth := prepared.Depth(op); depth > h.DepthLimit {
		c.send(errorMessage(m.ID, "QueryDepthLimitExceeded", fmt.Sprintf("maximum query depth exceeded %d > %d", depth, h.DepthLimit)))
		return
	}
	seen := collected{}
	if n := h.fields(prepared, seen, f, h.FieldLimit); n > h.FieldLimit {
		c.send(errorMessage(m.ID, "ResolverExecutionLimitReached", fmt.Sprintf("the subscription selects more than %d fields, the API's resolver count limit", h.FieldLimit)))
		return
	}
	if !h.authorize(h.schema.Subscription, f.Definition, caller) {
		c.send(errorMessage(m.ID, "Unauthorized", fmt.Sprintf("Not Authorized to access %s on type %s", f.Name, h.schema.Subscription.Name)))
		return
	}
	sub := &subscription{conn: c, id: m.ID, field: f, op: prepared, args: prepared.Args(f), collected: seen}
	if err := h.resolve(c.ctx, sub, caller); err != nil {
		var refusal *Refusal
		if !errors.As(err, &refusal) {
			refusal = &Refusal{Type: "InternalFailure", Message: err.Error()}
		}
		c.send(errorMessage(m.ID, refusal.Type, refusal.Message))
		return
	}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	c.ids[m.ID] = sub
	h.mu.Unlock()
	c.send(map[string]any{"type": "start_ack", "id": m.ID})
	if exp, ok := Expiry(caller); ok {
		timer := time.AfterFunc(time.Until(exp), func() { h.expire(sub) })
		context.AfterFunc(c.ctx, func() { timer.Stop() })
	}
}

// room refuses a start whose id the connection already runs
// (DuplicatedOperationError) or that would pass AppSync's quota of
// subscriptions on one connection (MaxSubscriptionsReachedError). The
// error types are those AppSync's clients handle; the messages are ours.
// A connection's messages are read one at a time, so no other start of
// it runs meanwhile.
func (h *Hub) room(c *connection, id string) *Refusal {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, dup := c.ids[id]; dup {
		return &Refusal{Type: "DuplicatedOperationError", Message: fmt.Sprintf("a subscription with id %s is already started on this connection", id)}
	}
	if len(c.ids) >= MaxSubscriptions {
		return &Refusal{Type: "MaxSubscriptionsReachedError", Message: fmt.Sprintf("a connection takes at most %d subscriptions", MaxSubscriptions)}
	}
	return nil
}

// end removes s from the hub and its connection's ids (the Hub's mu held),
// reporting whether it was still running.
func (h *Hub) end(s *subscription) bool {
	_, live := h.subs[s]
	delete(h.subs, s)
	if s.conn.ids[s.id] == s {
		delete(s.conn.ids, s.id)
	}
	return live
}

// Expiry is when the caller's token expires (its exp claim), if it says.
func Expiry(caller *appsync.Identity) (time.Time, bool) {
	if caller == nil || len(caller.Claims) == 0 {
		return time.Time{}, false
	}
	var claims struct {
		Exp *float64 `json:"exp"`
	}
	if json.Unmarshal(caller.Claims, &claims) != nil || claims.Exp == nil {
		return time.Time{}, false
	}
	return time.Unix(int64(*claims.Exp), 0), true
}

// expire ends a subscription whose caller's token has expired, as AppSync
// does: an error (UnauthorizedException, "Token has expired."), after the
// messages of what was published before, then no more of its messages;
// the connection's other callers' subscriptions, and every other
// connection, go on.
func (h *Hub) expire(s *subscription) {
	h.mu.Lock()
	live := h.end(s)
	h.mu.Unlock()
	if live {
		h.later(func() { s.conn.send(errorMessage(s.id, "UnauthorizedException", TokenExpired)) })
	}
}

// TokenExpired is the message of an expired token's error.
const TokenExpired = "Token has expired."

// resolve runs the subscription's resolver, if the hub has one, and keeps
// the filters it set: a filter past AppSync's limits refuses the
// subscription, as AppSync does.
func (h *Hub) resolve(ctx context.Context, sub *subscription, caller *appsync.Identity) error {
	if h.Resolve == nil {
		return nil
	}
	set, err := h.Resolve(ctx, sub.field, sub.args, caller)
	if err != nil {
		return err
	}
	for _, f := range []struct {
		raw any
		dst **Filter
	}{{set.Filter, &sub.filter}, {set.Invalidation, &sub.invalidation}} {
		if f.raw == nil {
			continue
		}
		if *f.dst, err = ParseFilter(f.raw); err != nil {
			return &Refusal{Type: "BadRequestException", Message: err.Error()}
		}
	}
	return nil
}

func (h *Hub) stop(c *connection, id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s, ok := c.ids[id]; ok {
		h.end(s)
	}
}

func (h *Hub) drop(c *connection) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, s := range c.ids {
		h.end(s)
	}
}

// Publish delivers the result of mutation (the mutation field's value, as
// its request selected it) to the subscriptions that listen to it and that
// it matches: their arguments, and their resolver's filter if it set one
// (under FilterAlone, that filter alone). It finds them at once and
// returns: their messages are built and sent off the mutation's path, in
// the order of the publications, so that a mutation takes as long with
// subscribers as without.
func (h *Hub) Publish(mutation string, value map[string]any) {
	h.mu.Lock()
	var targets []*subscription
	for s := range h.subs {
		if listensTo(s.field.Definition, mutation) && h.passes(s, value) {
			targets = append(targets, s)
		}
	}
	h.mu.Unlock()
	if len(targets) > 0 {
		h.later(func() { h.deliver(targets, value) })
	}
}

// deliver sends each target its message of value, but one past the
// reading's limit: found out as its JSON is written, and dropped before
// it is whole, as AppSync delivers no message past its limit and tells no
// one.
func (h *Hub) deliver(targets []*subscription, value map[string]any) {
	for _, s := range targets {
		data, errs := h.project(s.op, s.collected, s.field, value)
		msg, ok := h.Messages.dataMessage(s.id, s.field.Alias, data, errs)
		if !ok {
			h.dropped.Add(1)
			continue
		}
		s.conn.sendRaw(msg)
	}
}

// Wait returns once the messages of every publication made before it are
// sent or dropped.
func (h *Hub) Wait() {
	done := make(chan struct{})
	h.later(func() { close(done) })
	<-done
}

// later runs job after the jobs queued before it, on a goroutine of its
// own that ends when the queue is empty.
func (h *Hub) later(job func()) {
	h.jobsMu.Lock()
	h.jobs = append(h.jobs, job)
	start := !h.working
	h.working = true
	h.jobsMu.Unlock()
	if start {
		go h.work()
	}
}

func (h *Hub) work() {
	for {
		h.jobsMu.Lock()
		if len(h.jobs) == 0 {
			h.working = false
			h.jobsMu.Unlock()
			return
		}
		job := h.jobs[0]
		h.jobs[0], h.jobs = nil, h.jobs[1:]
		h.jobsMu.Unlock()
		job()
	}
}

// Dropped reports how many deliveries were left out for being larger than
// the Messages reading's limit, which AppSync drops in silence.
func (h *Hub) Dropped() int64 { return h.dropped.Load() }

// passes reports whether value, published, reaches subscription s.
func (h *Hub) passes(s *subscription, value map[string]any) bool {
	if s.filter == nil {
		return matches(s.args, value)
	}
	return s.filter.Match(value) && (h.Filtering == FilterAlone || matches(s.args, value))
}

// Invalidate ends each subscription to the subscription field whose
// resolver set an invalidation filter that payload matches
// (extensions.invalidateSubscriptions in a mutation's response handler):
// it is removed and its client told with a complete message, as AppSync
// unsubscribes it. It returns how many it ended.
func (h *Hub) Invalidate(field string, payload map[string]any) int {
	h.mu.Lock()
	var ended []*subscription
	for s := range h.subs {
		if s.field.Name == field && s.invalidation != nil && s.invalidation.Match(payload) {
			h.end(s)
			ended = append(ended, s)
		}
	}
	h.mu.Unlock()
	h.later(func() { // after the messages published before it
		for _, s := range ended {
			s.conn.send(map[string]any{"type": "complete", "id": s.id})
		}
	})
	return len(ended)
}

// listensTo reports whether the subscription field's @aws_subscribe lists
// the mutation.
func listensTo(def *ast.FieldDefinition, mutation string) bool {
	d := def.Directives.ForName("aws_subscribe")
	if d == nil {
		return false
	}
	arg := d.Arguments.ForName("mutations")
	if arg == nil || arg.Value == nil {
		return false
	}
	for _, c := range arg.Value.Children {
		if c.Value.Raw == mutation {
			return true
		}
	}
	return false
}

// matches reports whether every argument given equals the field of the
// same name in the mutation's result, as AppSync filters subscriptions.
func matches(args, value map[string]any) bool {
	for name, want := range args {
		if want == nil {
			continue
		}
		if got, ok := value[name]; !ok || fmt.Sprint(got) != fmt.Sprint(want) {
			return false
		}
	}
	return true
}

// project returns the fields of value the subscription field f selects,
// collected as a query's are (op.Fields): a field the mutation did not
// select is null, and an error where the schema does not allow null.
func (h *Hub) project(op *executor.Operation, seen collected, f *ast.Field, value map[string]any) (*object, []gqlError) {
	out := &object{}
	var errs []gqlError
	typ := f.Definition.Type.Name()
	fields, ok := seen[f]
	if !ok {
		fields = op.Fields(h.schema.Types[typ], f.SelectionSet)
		seen[f] = fields
	}
	for _, sf := range fields {
		v, present := value[sf.Name]
		if sf.Name == "__typename" {
			v, present = typ, true
		}
		if len(sf.SelectionSet) > 0 {
			var innerErrs []gqlError
			v, innerErrs = h.projectValue(op, seen, sf, v)
			errs = append(errs, innerErrs...)
		}
		if (!present || v == nil) && sf.Definition.Type.NonNull {
			errs = append(errs, gqlError{ErrorType: "GraphQLError", Message: fmt.Sprintf(
				"Cannot return null for non-nullable type: '%s' within parent '%s' (/%s/%s): the mutation's selection does not include it",
				sf.Definition.Type.Name(), typ, f.Alias, sf.Alias)})
		}
		out.add(sf.Alias, v) // op.Fields merged each response key into one field
	}
	return out, errs
}

// fields counts the fields under f's selection, each level's collected
// once into seen, until the count passes limit.
func (h *Hub) fields(op *executor.Operation, seen collected, f *ast.Field, limit int) int {
	if len(f.SelectionSet) == 0 {
		return 0
	}
	under, ok := seen[f]
	if !ok {
		under = op.Fields(h.schema.Types[f.Definition.Type.Name()], f.SelectionSet)
		seen[f] = under
	}
	n := 0
	for _, sf := range under {
		if n += 1 + h.fields(op, seen, sf, limit-n); n > limit {
			break
		}
	}
	return n
}

// collected are the fields op.Fields collects under each field with a
// selection: the same for every message of a subscription.
type collected map[*ast.Field][]*ast.Field

// projectValue is project of an object, or of each object of a list.
func (h *Hub) projectValue(op *executor.Operation, seen collected, f *ast.Field, v any) (any, []gqlError) {
	switch v := v.(type) {
	case map[string]any:
		return h.project(op, seen, f, v)
	case []any:
		var errs []gqlError
		out := make([]any, len(v))
		for i, e := range v {
			var more []gqlError
			out[i], more = h.projectValue(op, seen, f, e)
			errs = append(errs, more...)
		}
		return out, errs
	}
	return v, nil
}
