// The reference for the local AppSync's input coercion: graphql-js (from
// the console's packages) validates each request, coerces its variables
// and reports the arguments the named field's resolver gets, or that the
// request was refused before any resolver ran.
//
// Usage: node coerce.cjs <path of the graphql package> < cases.json
// A case: {"sdl", "query", "variables", "field": "Post.comments"}; the
// output: one {"refused": bool, "args": {...} | null} per case, in order.
'use strict';
const graphql = require(process.argv[2]);

let input = '';
process.stdin.setEncoding('utf8'); // a chunk may end within a character
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const { sdl, cases } = JSON.parse(input);
  const schema = graphql.buildSchema(sdl);
  const out = cases.map(({ query, variables, field }) => {
    const document = graphql.parse(query);
    if (graphql.validate(schema, document).length > 0) {
      return { refused: true, args: null };
    }
    let args = null;
    const fieldResolver = (source, a, context, info) => {
      if (`${info.parentType.name}.${info.fieldName}` === field && args === null) {
        args = a;
      }
      const type = graphql.getNamedType(info.returnType);
      if (graphql.isLeafType(type)) {
        return null;
      }
      return graphql.isListType(graphql.getNullableType(info.returnType)) ? [{}] : {};
    };
    const result = graphql.execute({ schema, document, variableValues: variables, fieldResolver });
    return { refused: result.data === undefined, args };
  });
  process.stdout.write(JSON.stringify(out));
});
