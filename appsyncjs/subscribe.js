// The resolver of a subscription field that the Lambda authorizes
// (Subscription.onCreateComment and Subscription.onPostActivity, routed by
// lambda/live): an AppSync JavaScript resolver (runtime APPSYNC_JS 1.0.0) on
// the Lambda data source. The CDK stack deploys this file and the local
// AppSync runs it, unchanged.
//
// As a subscription starts, the request handler asks the Lambda, with the
// event a direct Lambda resolver would send, whether the caller may read
// what the subscription follows. The Lambda answers as the query does: null
// for an absent post and for someone else's draft alike, so that a refusal
// tells a stranger nothing more than Query.post would. A null refuses the
// subscription (Unauthorized). An allowed one gets an enhanced filter and
// an invalidation filter of its arguments, each equal: it receives what the
// mutations it lists return for exactly those arguments (whether AppSync
// also matches the arguments themselves, undocumented, changes nothing),
// and an invalidation naming them ends it.
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
  if (ctx.result === null || ctx.result === undefined) {
    util.unauthorized();
  }
  const conditions = [];
  for (const name of Object.keys(ctx.args)) {
    conditions.push({ fieldName: name, operator: 'eq', value: ctx.args[name] });
  }
  const filter = { filterGroup: [{ filters: conditions }] };
  extensions.setSubscriptionFilter(filter);
  extensions.setSubscriptionInvalidationFilter(filter);
  return null;
}
