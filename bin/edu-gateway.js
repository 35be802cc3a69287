#!/usr/bin/env node
// Thin launcher: the CLI is TypeScript, run through tsx's loader so no build step is needed.
import { register } from 'tsx/esm/api';
register();
await import('../src/cli.ts');
