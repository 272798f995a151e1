// The resolver of a mutation that ends subscriptions (a route that
// Invalidates: Mutation.invalidatePost, routed by lambda/live): an AppSync
// JavaScript resolver (runtime APPSYNC_JS 1.0.0) on the Lambda data source.
// The CDK stack deploys this file and the local AppSync runs it, unchanged.
//
// The request handler invokes the Lambda with the event a direct Lambda
// resolver would send; the Lambda answers the field's value and the
// subscriptions to end, {value, invalidations: [{subscriptionField,
// payload}]}, and the response handler asks AppSync to end each
// (extensions.invalidateSubscriptions: AppSync ends the subscriptions to
// that field whose invalidation filter the payload matches, and tells
// their clients).
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
  for (const invalidation of ctx.result.invalidations) {
    extensions.invalidateSubscriptions({
      subscriptionField: invalidation.subscriptionField,
      payload: invalidation.payload,
    });
  }
  return ctx.result.value;
}
