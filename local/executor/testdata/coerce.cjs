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

// AppSync's scalars as its documentation defines them (scalars.html):
// AWSDateTime an extended ISO 8601 date and time with a required time zone
// offset (Z or +-hh:mm, :ss allowed), seconds and 1 to 9 digits of fraction
// optional; AWSEmail an RFC 822 addr-spec of dot-joined atoms.
const atom = "[!#$%&'*+\\-/=?^_`{|}~0-9A-Za-z]+";
const emailForm = new RegExp(`^${atom}(\\.${atom})*@${atom}(\\.${atom})*$`);
const awsScalars = {
  AWSDateTime(s) {
    const m = /^(-?\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2})(?::(\d{2}))?)$/.exec(s);
    if (!m) return false;
    const [y, mo, d, h, mi, se, oh, om, os] = m.slice(1).map((x) => (x === undefined ? 0 : Number(x)));
    const last = new Date(0);
    last.setUTCFullYear(y, mo, 0); // day 0 of the next month: the month's last day
    return mo >= 1 && mo <= 12 && d >= 1 && d <= last.getUTCDate() && h < 24 && mi < 60 && se < 60 && oh < 24 && om < 60 && os < 60;
  },
  AWSEmail: (s) => emailForm.test(s),
};

let input = '';
process.stdin.setEncoding('utf8'); // a chunk may end within a character
process.stdin.on('data', (d) => { input += d; });
process.stdin.on('end', () => {
  const { sdl, cases } = JSON.parse(input);
  const schema = graphql.buildSchema(sdl);
  for (const [name, valid] of Object.entries(awsScalars)) {
    const type = schema.getType(name);
    if (!type) continue;
    const refuse = (v) => { throw new TypeError(`${JSON.stringify(v)} is not a valid ${name}`); };
    type.parseValue = (v) => (typeof v === 'string' && valid(v) ? v : refuse(v));
    type.parseLiteral = (node) => (node.kind === graphql.Kind.STRING && valid(node.value) ? node.value : refuse(node.kind));
  }
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
