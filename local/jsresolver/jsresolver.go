// Package jsresolver runs AppSync JavaScript resolvers (runtime APPSYNC_JS
// 1.0.0) in Go, as the local AppSync's unit resolvers: the very file the
// stack deploys, its ES module syntax turned into CommonJS by esbuild, run
// by goja, with the part of @aws-appsync/utils the resolvers use.
//
// As in AppSync: request(ctx) returns the data source request, or ends the
// resolver with runtime.earlyReturn(value) (no data source is called and the
// response handler is skipped); response(ctx) gets the data source's result
// (ctx.result) or error (ctx.error) and returns the field's value;
// util.error(message, type) ends either handler with a GraphQL error, and
// util.unauthorized() with AppSync's Unauthorized one; a response handler's
// extensions calls come back with its value (Extensions).
package jsresolver

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/dop251/goja"
	"github.com/evanw/esbuild/pkg/api"
)

// utils is the subset of @aws-appsync/utils offered to resolvers. Both ways
// of ending a handler throw a marked object, which Go reads back.
const utils = `({
  util: {
    error: function (message, type, data, info) {
      throw { __appsync: 'error', message: String(message), type: type === undefined ? null : type, data: data, info: info };
    },
    unauthorized: function () {
      throw { __appsync: 'error', message: 'Not Authorized to access ' + __field.fieldName + ' on type ' + __field.parentTypeName, type: 'Unauthorized' };
    },
  },
  runtime: {
    earlyReturn: function (value) {
      throw { __appsync: 'earlyReturn', value: value === undefined ? null : value };
    },
  },
  extensions: {
    setSubscriptionFilter: function (filter) { __extensions.push({ kind: 'filter', value: filter }); },
    setSubscriptionInvalidationFilter: function (filter) { __extensions.push({ kind: 'invalidationFilter', value: filter }); },
    invalidateSubscriptions: function (invalidation) { __extensions.push({ kind: 'invalidate', value: invalidation }); },
  },
})`

// Extensions are what a response handler asked of AppSync through
// extensions: a subscription resolver's filters (filterJsonObjects, nil
// when it set none; the last one set counts) and a mutation's
// invalidations, in order. Which handler may call which is the caller's to
// check, as AppSync does.
type Extensions struct {
	SubscriptionFilter, InvalidationFilter any
	Invalidations                          []Invalidation
}

// Invalidation is one extensions.invalidateSubscriptions call: the
// subscription field and the payload its invalidation filters are matched
// against.
type Invalidation struct {
	SubscriptionField string         `json:"subscriptionField"`
	Payload           map[string]any `json:"payload"`
}

// Resolver is a loaded resolver file. It is safe for concurrent use.
type Resolver struct {
	name    string
	program *goja.Program
	pool    sync.Pool // of *instance
}

// instance is the resolver loaded in one JS runtime, used by one call at a time.
type instance struct {
	vm                *goja.Runtime
	request, response goja.Callable
	parse, stringify  goja.Callable // JSON's
}

// Load compiles the resolver in code (an ES module importing
// @aws-appsync/utils and exporting request and response). name names it in
// errors.
func Load(name, code string) (*Resolver, error) {
	out := api.Transform(code, api.TransformOptions{
		Loader: api.LoaderJS, Format: api.FormatCommonJS, Target: api.ES2017, Sourcefile: name,
	})
	if len(out.Errors) > 0 {
		return nil, fmt.Errorf("%s: %s (line %d)", name, out.Errors[0].Text, lineOf(out.Errors[0]))
	}
	wrapped := "(function (module, exports, require) {\n" + string(out.Code) + "\n})"
	program, err := goja.Compile(name, wrapped, true)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	r := &Resolver{name: name, program: program}
	inst, err := r.instance()
	if err != nil {
		return nil, err
	}
	r.pool.Put(inst)
	return r, nil
}

func lineOf(m api.Message) int {
	if m.Location == nil {
		return 0
	}
	return m.Location.Line
}

func (r *Resolver) instance() (*instance, error) {
	if inst, ok := r.pool.Get().(*instance); ok {
		return inst, nil
	}
	vm := goja.New()
	lib, err := vm.RunString(utils)
	if err != nil {
		return nil, err
	}
	require := func(call goja.FunctionCall) goja.Value {
		if mod := call.Argument(0).String(); mod != "@aws-appsync/utils" {
			panic(vm.NewTypeError("module %q is not available to APPSYNC_JS resolvers", mod))
		}
		return lib
	}
	wrapper, err := vm.RunProgram(r.program)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	run, ok := goja.AssertFunction(wrapper)
	if !ok {
		return nil, fmt.Errorf("%s: not a module", r.name)
	}
	module := vm.NewObject()
	exports := vm.NewObject()
	if err := module.Set("exports", exports); err != nil {
		return nil, err
	}
	if _, err := run(goja.Undefined(), module, exports, vm.ToValue(require)); err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	inst := &instance{vm: vm}
	exported := module.Get("exports").ToObject(vm)
	for name, dst := range map[string]*goja.Callable{"request": &inst.request, "response": &inst.response} {
		if *dst, ok = goja.AssertFunction(exported.Get(name)); !ok {
			return nil, fmt.Errorf("%s does not export a %s function", r.name, name)
		}
	}
	jsJSON := vm.Get("JSON").ToObject(vm)
	inst.parse, _ = goja.AssertFunction(jsJSON.Get("parse"))
	inst.stringify, _ = goja.AssertFunction(jsJSON.Get("stringify"))
	return inst, nil
}

// Context is the ctx the handlers get. Values are JSON-shaped (what
// encoding/json produces and accepts).
type Context struct {
	Arguments map[string]any `json:"arguments"`
	Source    any            `json:"source"`
	Identity  any            `json:"identity"`
	Request   any            `json:"request"`
	Info      Info           `json:"info"`
	Stash     map[string]any `json:"stash"`
	Prev      any            `json:"prev"`
	// Result and Error are the data source's, for the response handler.
	Result any        `json:"result"`
	Error  *SourceErr `json:"error,omitempty"`
}

// Info is ctx.info.
type Info struct {
	FieldName           string          `json:"fieldName"`
	ParentTypeName      string          `json:"parentTypeName"`
	Variables           json.RawMessage `json:"variables"`
	SelectionSetList    []string        `json:"selectionSetList"`
	SelectionSetGraphQL string          `json:"selectionSetGraphQL"`
}

// SourceErr is a data source's error as ctx.error shows it.
type SourceErr struct {
	Message string `json:"message"`
	Type    string `json:"type"`
}

// Error is a GraphQL error raised by util.error.
type Error struct {
	Message string
	Type    string
}

func (e *Error) Error() string { return e.Message }

// Request is what a request handler asked of its data source, or, when
// Early, the field's value returned by runtime.earlyReturn, as goja exports
// it: a part of ctx.source is the caller's own Go value, shared rather than
// copied as AppSync would (the resolvers here only read their source).
type Request struct {
	Early bool
	Value any // the early value
	// Operation and Payload are a Lambda data source request: "Invoke" or
	// "BatchInvoke", and the payload the function receives.
	Operation string
	Payload   any
}

// Request runs the request handler. An error is a *Error (util.error) or a
// failure of the code itself.
func (r *Resolver) Request(ctx Context) (Request, error) {
	v, err := r.call(func(inst *instance) goja.Callable { return inst.request }, ctx, nil)
	var early *earlyReturn
	if errors.As(err, &early) {
		return Request{Early: true, Value: early.value}, nil
	}
	if err != nil {
		return Request{}, err
	}
	out, _ := v.(map[string]any)
	op, _ := out["operation"].(string)
	if op != "Invoke" && op != "BatchInvoke" {
		return Request{}, fmt.Errorf("%s: request returned operation %q, want Invoke or BatchInvoke", r.name, op)
	}
	return Request{Operation: op, Payload: out["payload"]}, nil
}

// Response runs the response handler and returns the field's value and
// what it asked through extensions. An error is a *Error (util.error) or a
// failure of the code itself.
func (r *Resolver) Response(ctx Context) (any, Extensions, error) {
	var ext Extensions
	v, err := r.call(func(inst *instance) goja.Callable { return inst.response }, ctx, &ext)
	if errors.As(err, new(*earlyReturn)) {
		return nil, Extensions{}, fmt.Errorf("%s: runtime.earlyReturn is only for request handlers", r.name)
	}
	return v, ext, err
}

type earlyReturn struct{ value any }

func (*earlyReturn) Error() string { return "early return" }

// call runs one handler with ctx, as a fresh JS value (JSON.parse of ctx),
// and returns what it returned, exported to Go; into ext (nil: a request
// handler, where AppSync offers no extensions) what it asked through
// extensions.
func (r *Resolver) call(handler func(*instance) goja.Callable, ctx Context, ext *Extensions) (any, error) {
	if ctx.Arguments == nil {
		ctx.Arguments = map[string]any{}
	}
	if ctx.Stash == nil {
		ctx.Stash = map[string]any{}
	}
	if len(ctx.Info.Variables) == 0 {
		ctx.Info.Variables = json.RawMessage("{}")
	}
	if ctx.Info.SelectionSetList == nil {
		ctx.Info.SelectionSetList = []string{}
	}
	// The source, often the largest part and only read, goes in as the Go
	// value itself, which goja shows as an object; the rest as fresh JSON.
	source := ctx.Source
	ctx.Source = nil
	text, err := json.Marshal(ctx)
	if err != nil {
		return nil, err
	}
	inst, err := r.instance()
	if err != nil {
		return nil, err
	}
	defer r.pool.Put(inst)
	jsctx, err := inst.parse(goja.Undefined(), inst.vm.ToValue(string(text)))
	if err != nil {
		return nil, err
	}
	obj := jsctx.ToObject(inst.vm)
	if err := obj.Set("args", obj.Get("arguments")); err != nil {
		return nil, err
	}
	if source != nil {
		if err := obj.Set("source", inst.vm.ToValue(source)); err != nil {
			return nil, err
		}
	}
	asked := inst.vm.NewArray()
	if err := inst.vm.Set("__extensions", asked); err != nil {
		return nil, err
	}
	if err := inst.vm.Set("__field", map[string]string{"fieldName": ctx.Info.FieldName, "parentTypeName": ctx.Info.ParentTypeName}); err != nil {
		return nil, err
	}
	v, err := handler(inst)(goja.Undefined(), jsctx)
	if err != nil {
		return nil, r.thrown(inst, err)
	}
	if err := inst.extensions(asked, ext); err != nil {
		return nil, fmt.Errorf("%s: %w", r.name, err)
	}
	return inst.export(v)
}

// extensions reads into ext the calls a handler made of extensions,
// refusing any in a request handler (ext nil).
func (inst *instance) extensions(asked *goja.Object, ext *Extensions) error {
	calls, err := inst.export(asked)
	if err != nil {
		return err
	}
	for _, c := range calls.([]any) {
		c := c.(map[string]any)
		if ext == nil {
			return fmt.Errorf("extensions are for response handlers: a request handler called one (%s)", c["kind"])
		}
		switch c["kind"] {
		case "filter":
			ext.SubscriptionFilter = c["value"]
		case "invalidationFilter":
			ext.InvalidationFilter = c["value"]
		case "invalidate":
			b, _ := json.Marshal(c["value"])
			var inv Invalidation
			if err := json.Unmarshal(b, &inv); err != nil || inv.SubscriptionField == "" {
				return fmt.Errorf("extensions.invalidateSubscriptions takes {subscriptionField, payload}, not %s", b)
			}
			ext.Invalidations = append(ext.Invalidations, inv)
		}
	}
	return nil
}

// export returns v as encoding/json decodes JSON.stringify(v): what AppSync
// takes from a handler is JSON (members that are undefined are left out).
func (inst *instance) export(v goja.Value) (any, error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, nil
	}
	text, err := inst.stringify(goja.Undefined(), v)
	if err != nil || goja.IsUndefined(text) {
		return nil, err
	}
	var out any
	return out, json.Unmarshal([]byte(text.String()), &out)
}

// thrown converts what a handler threw: util.error and earlyReturn, or a
// failure of the code.
func (r *Resolver) thrown(inst *instance, err error) error {
	var ex *goja.Exception
	if !errors.As(err, &ex) {
		return fmt.Errorf("%s: %w", r.name, err)
	}
	if obj, ok := ex.Value().(*goja.Object); ok {
		switch obj.Get("__appsync").String() {
		case "earlyReturn":
			// Usually a part of the source: its Go value, not copied.
			return &earlyReturn{value: obj.Get("value").Export()}
		case "error":
			typ := ""
			if t := obj.Get("type"); !goja.IsNull(t) && !goja.IsUndefined(t) {
				typ = t.String()
			}
			return &Error{Message: obj.Get("message").String(), Type: typ}
		}
	}
	return fmt.Errorf("%s: %s", r.name, strings.TrimSpace(ex.Error()))
}
