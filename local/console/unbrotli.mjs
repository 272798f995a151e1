// Decompresses brotli files (node unbrotli.mjs IN OUT [IN OUT ...]): how make
// unpacks the headless Chromium that the npm package @sparticuz/chromium
// ships compressed, with Node's own zlib and nothing else.
import { readFileSync, writeFileSync } from 'node:fs';
import { brotliDecompressSync } from 'node:zlib';

const args = process.argv.slice(2);
for (let i = 0; i + 1 < args.length; i += 2) {
  writeFileSync(args[i + 1], brotliDecompressSync(readFileSync(args[i])));
}
