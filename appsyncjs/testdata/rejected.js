// What the APPSYNC_JS runtime rejects, one construct a line: the linter must
// flag each (appsyncjs_test.go counts them).
export function request(ctx) {
  try { ctx.stash.x = 1; } catch (e) { ctx.stash.x = 2; }
  let i = 0;
  while (i < 3) { i = i + 1; }
  ctx.stash.n = i++;
  return /re/.test(ctx.args.q);
}
