// node bench.mjs DIR MS: resolves each payload of DIR/data.json's cases as
// the Node Lambda runtime would (the payload parsed from its bytes, the
// reply serialized): for MS/2 milliseconds to warm up (the JIT compiles
// the hot code), then for at least MS milliseconds measured, at least once
// each; writes [{name, nsPerOp, reply}] as JSON to standard output.
import { readFileSync } from 'node:fs';
import { newApp } from './resolver.mjs';

const [dir, ms] = [process.argv[2], Number(process.argv[3])];
const data = JSON.parse(readFileSync(`${dir}/data.json`, 'utf8'));
const app = newApp(data);
const context = { awsRequestId: 'bench', functionName: 'bench', getRemainingTimeInMillis: () => 10000 };
const now = () => Number(process.hrtime.bigint());
const out = [];
for (const c of data.cases) {
  const payload = readFileSync(`${dir}/${c.file}`, 'utf8');
  const once = async () => JSON.stringify(await app.resolve(JSON.parse(payload), context));
  const reply = await once();
  for (const end = now() + (ms / 2) * 1e6; now() < end; ) await once();
  let n = 0;
  const start = now();
  do {
    await once();
    n++;
  } while (now() < start + ms * 1e6);
  out.push({ name: c.name, nsPerOp: (now() - start) / n, reply: JSON.parse(reply) });
}
process.stdout.write(JSON.stringify(out));
