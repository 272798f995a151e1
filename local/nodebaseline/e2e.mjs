// node e2e.mjs DIR ENDPOINT TABLE: the end-to-end peer. It reads a line
// "FILE N" at a time on standard input and resolves DIR/FILE's payload N
// times as the Node Lambda runtime would (parsed from its bytes, resolved
// against DynamoDB at ENDPOINT, the reply serialized), one after another,
// and writes a line of JSON: {ns: [each call's nanoseconds], reply}.
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { DynamoDBClient, BatchGetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { newDynamoApp } from './resolver.mjs';

const [dir, endpoint, table] = process.argv.slice(2);
// Built once, as at a cold start; keep-alive connections, as the SDK's default.
const client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
const app = newDynamoApp({ client, table, BatchGetItemCommand, QueryCommand });
const context = { awsRequestId: 'e2e', functionName: 'e2e', getRemainingTimeInMillis: () => 10000 };
const now = () => process.hrtime.bigint();
for await (const line of createInterface({ input: process.stdin })) {
  const [file, n] = line.split(' ');
  const payload = readFileSync(`${dir}/${file}`, 'utf8');
  const ns = [];
  let reply;
  for (let i = 0; i < Number(n); i++) {
    const start = now();
    reply = JSON.stringify(await app.resolve(JSON.parse(payload), context));
    ns.push(Number(now() - start));
  }
  process.stdout.write(JSON.stringify({ ns, reply: JSON.parse(reply) }) + '\n');
}
