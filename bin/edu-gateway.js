#!/usr/bin/env node
// Thin launcher: runs the compiled CLI (dist/cli.js), compiling src/ first when dist/ is missing or older
// than the sources, as `npm start` does.
import { pathToFileURL } from 'node:url';
import { ensureBuilt } from '../scripts/ensure-build.mjs';

let entry;
try {
  entry = ensureBuilt();
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
await import(pathToFileURL(entry).href);
