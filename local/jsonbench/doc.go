// Package jsonbench compares JSON decoders on the Lambda's traffic (see its
// benchmark): encoding/json, the function's own scanner (appsync.Decode),
// and well-kept fast Go JSON libraries, for speed and for whether they
// refuse what encoding/json refuses. Nothing here ships: the function uses
// the scanner alone.
package jsonbench
