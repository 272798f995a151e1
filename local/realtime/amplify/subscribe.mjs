// Subscribes with Amplify, the client library AppSync users use, and prints
// what it receives, a JSON line each: {"ready":true} once connected, then
// {"data":...} per event, {"error":...} on an error. It exits after the
// number of events given, or after 20 seconds.
//
//   node subscribe.mjs <endpoint> <token> <query> <variables JSON> <events>
import WebSocket from 'ws';
import { Amplify } from 'aws-amplify';
import { Hub } from 'aws-amplify/utils';
import { generateClient, CONNECTION_STATE_CHANGE, ConnectionState } from 'aws-amplify/api';

globalThis.WebSocket = WebSocket; // Node 20 has none

const [endpoint, token, query, variables, events] = process.argv.slice(2);
const out = (v) => process.stdout.write(JSON.stringify(v) + '\n');

Amplify.configure({ API: { GraphQL: { endpoint, region: 'local-1', defaultAuthMode: 'lambda' } } });
Hub.listen('api', ({ payload }) => {
  if (payload.event === CONNECTION_STATE_CHANGE && payload.data.connectionState === ConnectionState.Connected) {
    out({ ready: true });
  }
});
let left = Number(events);
const client = generateClient();
const sub = client
  .graphql({ query, variables: JSON.parse(variables), authMode: 'lambda', authToken: token })
  .subscribe({
    next: (event) => {
      out({ data: event.data });
      if (--left <= 0) {
        sub.unsubscribe();
        setTimeout(() => process.exit(0), 100);
      }
    },
    error: (err) => {
      out({ error: err?.errors ?? String(err) });
      process.exit(1);
    },
  });
setTimeout(() => {
  out({ error: 'timed out' });
  process.exit(2);
}, 20000);
