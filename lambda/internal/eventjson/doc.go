// Package eventjson is a speed-up: the AppSync event decoded by walking the
// payload, not by encoding/json (appsync.Decode, the reference).
//
// A batch repeats every request header, the identity and the info of the
// query in each of its events, and most of it is never read: Decode keeps
// raw slices of the members a resolver may read and skips the rest at
// scanning speed (docs/benchmarks.md measures the two: make bench). Its fuzz
// tests hold it to encoding/json. resolver.New installs it by the lines
// marked "speed-up: eventjson"; deleting them turns it off.
package eventjson
