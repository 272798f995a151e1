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
