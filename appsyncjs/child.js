// The resolver of every child field (Post.author, Post.comments, User.posts,
// ...): an AppSync JavaScript resolver (runtime APPSYNC_JS 1.0.0) on the
// Lambda data source. The CDK stack deploys this file and the local AppSync
// runs it, unchanged.
//
// When the parent's result carries the answer for this field with exactly
// these arguments (the Lambda resolving the parent resolved the levels below
// it), the request handler returns it early: no data source is called, as
// in the seed's `#if($ctx.source.items) #return($ctx.source.items)`.
// Otherwise it invokes the Lambda with the event a direct Lambda resolver
// sends, less what the Lambda never reads (the request headers, the answers
// on the source, the selection list, the identity's claims, variables the
// selection does not name), and the response handler turns the
// Lambda's per-item {data, errorMessage, errorType} into the field's value or
// its GraphQL error.
import { util, runtime } from '@aws-appsync/utils';

// The members of a resolved object that hold its children's answers and the
// default arguments of the fields answered (resolver.AnswersMember and
// resolver.defaultsMember in the Lambda).
const ANSWERS = '_answers';
const DEFAULTS = '_defaults';

// The request header that asks the resolver of the field it names
// ("Post.comments") to fail with the selection AppSync gave it, as the
// function does for root fields (lambda/probe's Header): the deployment and
// make smoke read it to tell how AppSync writes a field merged from several
// occurrences.
const PROBE_HEADER = 'x-selection-probe';

// A selection longer than this, with the variables it names, in UTF-16
// code units, is not sent: each event then stays within the Lambda's
// payload.EventReserve (8 kB, at six bytes a unit escaped) besides its
// source, so that a full batch of the largest sources fits Lambda's 6 MB.
// Without a selection the Lambda reads every attribute and answers no
// child: correct, only slower. (appsyncjs's test checks the two agree.)
const MAX_SELECTION = 1000;

/**
 * The key of the answer to this field with these arguments, as the Lambda
 * writes it (resolver.answerKey): the field's name, then "|name=value" for
 * each argument that is neither null nor its default, by name, the value in
 * JSON.
 * @param {string} field
 * @param {Record<string, any>} args
 * @param {Record<string, any>} defaults
 * @returns {string}
 */
function answerKey(field, args, defaults) {
  const names = Object.keys(args || {})
    .filter(
      (name) =>
        args[name] !== null &&
        args[name] !== undefined &&
        JSON.stringify(args[name]) !== JSON.stringify(defaults[name]),
    )
    .sort();
  let key = field;
  for (const name of names) {
    key = key + '|' + name + '=' + JSON.stringify(args[name]);
  }
  return key;
}

/**
 * The variables that selection names ($name), of those passed.
 * @param {string} selection
 * @param {Record<string, any>} passed
 * @returns {Record<string, any>}
 */
function namedVariables(selection, passed) {
  const out = {};
  const pieces = selection.split('$');
  for (const piece of pieces.slice(1)) {
    // A name ends where the text goes on (no regular expressions in this
    // runtime): a name read too long matches no variable, which is then not
    // sent, and the Lambda takes its argument for unknown.
    let name = piece;
    for (const end of [')', ',', ' ', '\n', '\r', '\t', ']', '}']) {
      name = name.split(end)[0];
    }
    if (name !== '' && passed[name] !== undefined) {
      out[name] = passed[name];
    }
  }
  return out;
}

/**
 * @param {import('@aws-appsync/utils').Context} ctx
 */
export function request(ctx) {
  const headers = (ctx.request || {}).headers || {};
  if (headers[PROBE_HEADER] === ctx.info.parentTypeName + '.' + ctx.info.fieldName) {
    util.error(
      JSON.stringify({
        selectionSetGraphQL: ctx.info.selectionSetGraphQL,
        selectionSetList: ctx.info.selectionSetList,
      }),
      'SelectionProbe',
    );
  }
  const parent = ctx.source || {};
  const answers = parent[ANSWERS];
  if (answers) {
    const defaults = (parent[DEFAULTS] || {})[ctx.info.fieldName] || {};
    const answer = answers[answerKey(ctx.info.fieldName, ctx.args, defaults)];
    if (answer !== undefined) {
      runtime.earlyReturn(answer);
    }
  }
  const source = {};
  for (const name of Object.keys(parent)) {
    if (name !== ANSWERS && name !== DEFAULTS) {
      source[name] = parent[name];
    }
  }
  const identity = ctx.identity
    ? { sub: ctx.identity.sub, resolverContext: ctx.identity.resolverContext }
    : null;
  // The Lambda reads the variables only for the $names in the selection.
  let selection = ctx.info.selectionSetGraphQL || '';
  let variables = selection.length > MAX_SELECTION ? {} : namedVariables(selection, ctx.info.variables || {});
  const named = Object.keys(variables).length > 0;
  if (selection.length + (named ? JSON.stringify(variables).length : 0) > MAX_SELECTION) {
    selection = '';
    variables = {};
  }
  return {
    operation: 'BatchInvoke',
    payload: {
      arguments: ctx.args,
      identity: identity,
      source: source,
      info: {
        parentTypeName: ctx.info.parentTypeName,
        fieldName: ctx.info.fieldName,
        selectionSetGraphQL: selection,
        variables: variables,
      },
    },
  };
}

/**
 * @param {import('@aws-appsync/utils').Context} ctx
 */
export function response(ctx) {
  if (ctx.error) {
    util.error(ctx.error.message, ctx.error.type);
  }
  const item = ctx.result;
  if (item && item.errorMessage) {
    util.error(item.errorMessage, item.errorType);
  }
  return item ? item.data : null;
}
