// The resolver of a root field that needs JavaScript (routed by lambda/live):
// an AppSync JavaScript resolver (runtime APPSYNC_JS 1.0.0) on the Lambda
// data source. The CDK stack deploys this file and the local AppSync runs
// it, unchanged. The request handler invokes the Lambda with the event a
// direct Lambda resolver would send; the response handler does what the
// field is:
//
// A subscription the Lambda authorizes (Subscription.onCreateComment,
// Subscription.onPostActivity, Subscription.onFeed), as a subscription
// starts: the Lambda answers whether the caller may read what it follows,
// as the query does (null for an absent post and for someone else's draft
// alike, so that a refusal tells a stranger nothing more than Query.post
// would), with the conditions of its filter, {field: {operator: value}}. A
// null, or no condition, refuses the subscription (Unauthorized): no
// subscription is left unfiltered. An allowed one gets an enhanced filter
// and an invalidation filter of those conditions: a post's subscriptions
// each field of their arguments equal (whether AppSync also matches the
// arguments themselves, undocumented, changes nothing), a feed's its
// readers containing the caller; an invalidation whose payload matches
// them ends it.
//
// A mutation that ends subscriptions (Mutation.invalidatePost, a route that
// Invalidates): the Lambda answers the field's value and the subscriptions
// to end, {value, invalidations: [{subscriptionField, payload}]}, and the
// handler asks AppSync to end each (extensions.invalidateSubscriptions:
// AppSync ends the subscriptions to that field whose invalidation filter
// the payload matches, and tells their clients).
import { util, extensions } from '@aws-appsync/utils';

/**
 * @param {import('@aws-appsync/utils').Context} ctx
 */
export function request(ctx) {
  const identity = ctx.identity
    ? { sub: ctx.identity.sub, resolverContext: ctx.identity.resolverContext }
    : null;
  return {
    operation: 'Invoke',
    payload: {
      arguments: ctx.args,
      identity: identity,
      source: null,
      info: {
        parentTypeName: ctx.info.parentTypeName,
        fieldName: ctx.info.fieldName,
        selectionSetGraphQL: '',
        variables: {},
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
  if (ctx.info.parentTypeName === 'Mutation') {
    for (const invalidation of ctx.result.invalidations) {
      extensions.invalidateSubscriptions({
        subscriptionField: invalidation.subscriptionField,
        payload: invalidation.payload,
      });
    }
    return ctx.result.value;
  }
  const conditions = [];
  const answer = ctx.result === null || ctx.result === undefined ? {} : ctx.result;
  for (const name of Object.keys(answer)) {
    for (const operator of Object.keys(answer[name])) {
      conditions.push({ fieldName: name, operator: operator, value: answer[name][operator] });
    }
  }
  if (conditions.length === 0) {
    util.unauthorized();
  }
  const filter = { filterGroup: [{ filters: conditions }] };
  extensions.setSubscriptionFilter(filter);
  extensions.setSubscriptionInvalidationFilter(filter);
  return null;
}
