// `npm run clients:generate`: regenerates the TypeScript client's types (clients/ts/src/openapi.ts) from the
// gateway's OpenAPI document, with openapi-typescript. test/clients.test.ts fetches /openapi.json from a
// running gateway, runs the same generation and fails when the committed file differs.
//
// Only the external gateway (/api/scoped/*) goes into the client: admin routes change often and a site
// never calls them, so they would only make the committed file churn.
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';
import * as prettier from 'prettier';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const GENERATED_FILE = join(ROOT, 'clients', 'ts', 'src', 'openapi.ts');
export const REGENERATE_HINT =
  "clients/ts/src/openapi.ts does not match the gateway's /openapi.json: run `npm run clients:generate` and commit the result";

type Json = Record<string, any>;

/** Every `#/components/<kind>/<name>` reference reachable from `node`. */
function collectRefs(node: unknown, into: Set<string>): void {
  if (Array.isArray(node)) for (const v of node) collectRefs(v, into);
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith('#/components/')) into.add(v);
      else collectRefs(v, into);
    }
  }
}

/** The document reduced to the /api/scoped/* paths and the components they reference (transitively). */
export function gatewaySubset(doc: Json): Json {
  const paths = Object.fromEntries(
    Object.entries(doc.paths ?? {})
      .filter(([p]) => p.startsWith('/api/scoped/'))
      .sort(([a], [b]) => a.localeCompare(b)),
  );
  const refs = new Set<string>();
  collectRefs(paths, refs);
  const components: Json = {};
  const queue = [...refs];
  while (queue.length) {
    const ref = queue.pop()!;
    const [, , kind, name] = ref.split('/');
    const target = doc.components?.[kind]?.[name];
    if (target === undefined || components[kind]?.[name] !== undefined) continue;
    (components[kind] ??= {})[name] = target;
    const more = new Set<string>();
    collectRefs(target, more);
    for (const r of more) {
      if (refs.has(r)) continue;
      refs.add(r);
      queue.push(r);
    }
  }
  if (doc.components?.securitySchemes?.apiKey)
    (components.securitySchemes ??= {}).apiKey = doc.components.securitySchemes.apiKey;
  return {
    openapi: doc.openapi,
    info: { title: doc.info?.title, version: doc.info?.version },
    paths,
    // What a site receives (OpenAPI 3.1 webhooks, SPEC §13): typed for receivers written in TypeScript.
    ...(doc.webhooks ? { webhooks: doc.webhooks } : {}),
    components,
  };
}

/** The TypeScript source for the given OpenAPI document, formatted as the repository formats code. */
export async function generateTypes(doc: Json): Promise<string> {
  const subset = gatewaySubset(doc);
  const ast = await openapiTS(subset as never, { silent: true, alphabetize: true });
  const header = COMMENT_HEADER.replace(
    ' */',
    ` * Source: /openapi.json of the gateway (API version ${subset.info.version}), /api/scoped/* only.\n * Regenerate with \`npm run clients:generate\`.\n */`,
  );
  const source = header + astToString(ast);
  const options = (await prettier.resolveConfig(GENERATED_FILE)) ?? {};
  return prettier.format(source, { ...options, filepath: GENERATED_FILE });
}

/** The document the app serves, built in this process over a throw-away in-memory database. */
export async function servedDocument(): Promise<Json> {
  // An empty environment: the limits of `fields` appear in the document, and the committed types
  // describe the defaults whatever FIELDS_MAX_MEMBERS/FIELDS_MAX_STRING this shell or .env sets.
  const { loadConfig } = await import('../src/config.js');
  const { openDatabase } = await import('../src/db/index.js');
  const { buildApp } = await import('../src/http/app.js');
  const { systemClock } = await import('../src/services/context.js');
  const db = await openDatabase('sqlite::memory:');
  const app = await buildApp({ db, config: loadConfig({}), clock: systemClock, secret: 'generator' });
  try {
    const res = await app.inject({ method: 'GET', url: '/openapi.json' });
    if (res.statusCode !== 200) throw new Error(`/openapi.json answered ${res.statusCode}`);
    return JSON.parse(res.body) as Json;
  } finally {
    await app.close();
    await db.close();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const fresh = await generateTypes(await servedDocument());
  let old = '';
  try {
    old = readFileSync(GENERATED_FILE, 'utf8');
  } catch {
    /* first generation */
  }
  if (old === fresh) console.log(`${GENERATED_FILE}: up to date`);
  else {
    writeFileSync(GENERATED_FILE, fresh);
    console.log(`${GENERATED_FILE}: regenerated; commit it with the change that altered the API`);
  }
}
