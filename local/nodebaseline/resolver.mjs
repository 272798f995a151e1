// The traffic's fields resolved as a Node function written with Powertools
// for AWS Lambda (TypeScript) would resolve them, with the same data in
// memory as the Go benchmark's store: the baseline of the per-event cost
// (local/nodebaseline). It does what the Go handler does without answers
// for child fields: Post.author and Comment.author as one batch whose users
// are looked up once per distinct ID (as one BatchGetItem would be), and
// Post.comments served from the first page its parent read with the post.
import { AppSyncGraphQLResolver } from '@aws-lambda-powertools/event-handler/appsync-graphql';

const defaultLimit = 20;

export function newApp({ users, posts }) {
  const usersById = new Map(users.map((u) => [u.id, u]));
  const postsById = new Map(posts.map((p) => [p.id, p]));
  const app = new AppSyncGraphQLResolver();

  // A user's email is shown to that user only.
  const show = (user, sub) => (user === null || user.id === sub ? user : { ...user, email: null });
  const authors = (events) => {
    const found = new Map();
    for (const e of events) {
      const id = e.source?.authorId;
      if (id && !found.has(id)) found.set(id, usersById.get(id) ?? null);
    }
    return events.map((e) => show(found.get(e.source?.authorId) ?? null, e.identity?.sub));
  };
  app.batchResolver(authors, { typeName: 'Post', fieldName: 'author' });
  app.batchResolver(authors, { typeName: 'Comment', fieldName: 'author' });

  app.batchResolver(
    (args, { event }) => {
      const pre = event.source?.prefetchedComments;
      const limit = args.limit ?? defaultLimit;
      if (!args.nextToken && pre && pre.parent === event.source.id && pre.complete && pre.items.length <= limit) {
        return { items: pre.items, nextToken: null };
      }
      throw new Error('the benchmark serves only first pages its parent read');
    },
    { typeName: 'Post', fieldName: 'comments', aggregate: false, throwOnError: true },
  );

  app.resolver(({ id }) => postsById.get(id) ?? null, { typeName: 'Query', fieldName: 'post' });
  return app;
}

// newDynamoApp is the same function reading from DynamoDB (the table the
// Go store writes): Post.author and Comment.author as one BatchGetItem of
// the batch's distinct authors' user items (eventually consistent, every
// attribute, UnprocessedKeys asked again), and Post.comments as one Query
// of the post's partition (its first page, oldest first), as a Node
// resolver with the AWS SDK would read them: the end-to-end baseline.
export function newDynamoApp({ client, table, BatchGetItemCommand, QueryCommand }) {
  const app = new AppSyncGraphQLResolver();
  const show = (user, sub) => (user === null || user.id === sub ? user : { ...user, email: null });
  const str = (item, name) => (item[name] && 'S' in item[name] ? item[name].S : null);
  const num = (item, name) => (item[name] && 'N' in item[name] ? Number(item[name].N) : 0);
  const user = (item) => ({
    id: str(item, 'id'), handle: str(item, 'handle'), name: str(item, 'name'), email: str(item, 'email'),
    bio: str(item, 'bio'), createdAt: str(item, 'createdAt'),
    postCount: num(item, 'postCount'), followerCount: num(item, 'followerCount'), followingCount: num(item, 'followingCount'),
  });
  const users = async (ids) => {
    const found = new Map();
    for (let i = 0; i < ids.length; i += 100) {
      let keys = ids.slice(i, i + 100).map((id) => ({ pk: { S: 'USER#' + id }, sk: { S: '#METADATA' } }));
      while (keys.length > 0) {
        const out = await client.send(new BatchGetItemCommand({ RequestItems: { [table]: { Keys: keys } } }));
        for (const item of out.Responses?.[table] ?? []) found.set(str(item, 'id'), user(item));
        keys = out.UnprocessedKeys?.[table]?.Keys ?? [];
      }
    }
    return found;
  };
  const authors = async (events) => {
    const ids = [...new Set(events.map((e) => e.source?.authorId).filter(Boolean))];
    const found = await users(ids);
    return events.map((e) => show(found.get(e.source?.authorId) ?? null, e.identity?.sub));
  };
  app.batchResolver(authors, { typeName: 'Post', fieldName: 'author' });
  app.batchResolver(authors, { typeName: 'Comment', fieldName: 'author' });
  const comment = (item) => ({
    id: str(item, 'id'), postId: str(item, 'postId'), authorId: str(item, 'authorId'), body: str(item, 'body'), createdAt: str(item, 'createdAt'),
  });
  app.batchResolver(
    async (args, { event }) => {
      const out = await client.send(new QueryCommand({
        TableName: table, KeyConditionExpression: 'pk = :pk AND begins_with(sk, :c)',
        ExpressionAttributeValues: { ':pk': { S: 'POST#' + event.source.id }, ':c': { S: 'COMMENT#' } }, Limit: args.limit ?? 20,
      }));
      return { items: (out.Items ?? []).map(comment), nextToken: null };
    },
    { typeName: 'Post', fieldName: 'comments', aggregate: false, throwOnError: true },
  );
  return app;
}
