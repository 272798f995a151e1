// Package eventjson is a speed-up: the AppSync event decoded by walking the
// payload, not by encoding/json (appsync.Decode, the reference), and the
// walkers of JSON known to be valid that the resolver reads sources and
// answers with.
//
// A batch repeats every request header, the identity and the info of the
// query in each of its events, and most of it is never read: Decode keeps
// raw slices of the members a resolver may read and skips the rest at
// scanning speed (docs/benchmarks.md measures the two: make bench). Its fuzz
// tests hold every function to encoding/json. The resolver's handler
// decodes with Decode in one line (lambda/resolver/handler.go, Invoke);
// appsync.Decode in its place turns it off.
package eventjson
