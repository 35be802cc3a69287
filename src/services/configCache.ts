// Per-process cache of the configuration the request path reads on every call: API keys by hash with
// their project, routed templates, cart chains. Correct across processes without a time-to-live: the
// config_version row (migration 004) moves forward in the same transaction as any change to those
// tables, every request reads it (one indexed single-row read instead of the joins it replaces), and a
// version newer than the cache's drops the whole cache. So a key disabled by any process, the CLI or
// plain SQL is refused on the next request everywhere.
//
// Entries are loaded after the version was read, so what a generation holds is never older than its
// version; an answer that arrives late with an older version is served uncached and never kept.
import { CompiledQuery } from 'kysely';
import { batcher, fulfilled } from '../batcher.js';
import type { Db } from '../db/index.js';
import type { Project, TemplateRow } from '../db/schema.js';
import { cartChain, defaultChainKeys, type ChainStep } from '../domain/cartChain.js';
import type { Topic } from '../domain/consent.js';
import { listTopics } from '../repos/consent.js';
import { findKeyByHash, type ApiKey } from '../repos/keys.js';
import { cartChainSequence } from '../repos/projectConfig.js';
import { findProjectById } from '../repos/projects.js';
import { findTemplate, routedTemplate } from '../repos/templates.js';
import type { Executor } from '../repos/types.js';

/** Bounds every map: a flood of distinct lookups cannot grow the cache for ever. */
const MAX_ENTRIES = 10_000;
const READ_VERSION = CompiledQuery.raw('select version from config_version');

function remember<K, V>(m: Map<K, Promise<V>>, k: K, load: () => Promise<V>): Promise<V> {
  let p = m.get(k);
  if (!p) {
    if (m.size >= MAX_ENTRIES) m.clear();
    p = load();
    m.set(k, p);
    // A failed load (database hiccup) is not remembered.
    p.catch(() => m.delete(k));
  }
  return p;
}

/** The configuration as of one version; every request works from the snapshot it was given. */
export class ConfigSnapshot {
  private readonly keys = new Map<string, Promise<{ key: ApiKey; project: Project } | null>>();
  private readonly routes = new Map<string, Promise<TemplateRow | null>>();
  private readonly chains = new Map<string, Promise<ChainStep<TemplateRow>[]>>();
  private readonly topicLists = new Map<number, Promise<Topic[]>>();

  constructor(
    readonly version: number,
    private readonly db: Executor,
  ) {}

  /** The key with this hash and its project, or null when there is none. */
  keyByHash(hash: string): Promise<{ key: ApiKey; project: Project } | null> {
    return remember(this.keys, hash, async () => {
      const key = await findKeyByHash(this.db, hash);
      if (!key) return null;
      const project = await findProjectById(this.db, key.project_id);
      return project ? { key, project } : null;
    });
  }

  routedTemplate(projectId: number, routingKey: string): Promise<TemplateRow | null> {
    return remember(
      this.routes,
      `${projectId}\n${routingKey}`,
      async () => (await routedTemplate(this.db, projectId, routingKey)) ?? null,
    );
  }

  /** The project's consent topics (SPEC §18). */
  topics(projectId: number): Promise<Topic[]> {
    return remember(this.topicLists, projectId, () => listTopics(this.db, projectId));
  }

  /** The project's chain for a cart type (domain/cartChain.ts decides; this loads what it reads). */
  cartChain(projectId: number, cartType: string): Promise<ChainStep<TemplateRow>[]> {
    return remember(this.chains, `${projectId}\n${cartType}`, async () => {
      const seq = await cartChainSequence(this.db, projectId, cartType);
      const routed = new Map<string, TemplateRow>();
      if (seq) {
        const configured = [];
        for (const s of seq.steps)
          configured.push({ template: await findTemplate(this.db, s.template_id), delay_minutes: s.delay_minutes });
        return cartChain(projectId, cartType, configured, routed);
      }
      for (const key of defaultChainKeys(cartType)) {
        const template = await routedTemplate(this.db, projectId, key);
        if (template) routed.set(key, template);
      }
      return cartChain(projectId, cartType, null, routed);
    });
  }
}

class ConfigCache {
  private current: ConfigSnapshot | null = null;
  constructor(private readonly db: Db) {}

  /**
   * Requests that arrive together share one read of the version. The read is sent only after every
   * request it answers has arrived, so each of them still sees any change committed before it came;
   * requests arriving while it is under way share the next one, which does not wait for it.
   */
  readonly snapshot = batcher<void, ConfigSnapshot>({
    overlap: true,
    run: async (waiting) => {
      const s = await this.read();
      return waiting.map(() => fulfilled(s));
    },
  });

  private async read(): Promise<ConfigSnapshot> {
    const { rows } = await this.db.db.executeQuery<{ version: number | string }>(READ_VERSION);
    const version = Number(rows[0]?.version ?? 0);
    if (!this.current || version > this.current.version) this.current = new ConfigSnapshot(version, this.db.db);
    else if (version < this.current.version) return new ConfigSnapshot(version, this.db.db);
    return this.current;
  }
}

const caches = new WeakMap<Db, ConfigCache>();

/** The current configuration of this database, as seen by this process (one row read). */
export function configSnapshot(db: Db): Promise<ConfigSnapshot> {
  let c = caches.get(db);
  if (!c) caches.set(db, (c = new ConfigCache(db)));
  return c.snapshot();
}
