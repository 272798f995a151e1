// The reference for what a subscriber receives of a mutation's value:
// graphql-js (from the console's packages) executes the subscriber's
// selection, written as a query, over that value with its default
// resolvers, which read each field by name.
//
// Usage: node select.cjs <path of the graphql package> < cases.json
// Input: {"sdl", "cases": [{"query", "variables", "value"}]}; the output: one
// {"data": ..., "errors": [messages]} per case, in order.
'use strict';
const graphql = require(process.argv[2]);

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const { sdl, cases } = JSON.parse(input);
  const schema = graphql.buildSchema(sdl);
  const out = cases.map(({ query, variables, value }) => {
    const r = graphql.graphqlSync({ schema, source: query, rootValue: { root: value }, variableValues: variables });
    return { data: r.data ? r.data.root : null, errors: (r.errors || []).map((e) => e.message) };
  });
  process.stdout.write(JSON.stringify(out));
});
