// Issue 35, tenants apart (SPEC §21):
// - projects.allow_private_relays: an owner lets one project's relay URLs name loopback or private
//   addresses (a relay on the same host), as allow_private_webhooks does for webhooks;
// - sender_domains: the domains a project may send from, verified by a TXT record or approved by an
//   owner. The domains each project sends from today (its from_email and reply_to, and those of its relay
//   settings) are approved here, so nothing that sends before the upgrade stops after it;
// - login_throttle: failed logins counted per account and per source address in the database, so every
//   API process of an installation counts the same attempts (no installation-wide counter).
import { randomBytes } from 'node:crypto';
import { domainToASCII } from 'node:url';
import type { Kysely } from 'kysely';
import type { MigrationContext } from '../migrate.js';

/** The domain of an address as stored (lower case, IDN as punycode); repeated in services/senderDomains.ts. */
function domainOf(address: unknown): string | null {
  if (typeof address !== 'string') return null;
  const at = address.lastIndexOf('@');
  if (at < 0) return null;
  const ascii = domainToASCII(
    address
      .slice(at + 1)
      .trim()
      .toLowerCase(),
  );
  return ascii ? ascii : null;
}

export async function up(db: Kysely<any>, { dialect }: MigrationContext): Promise<void> {
  const idType = dialect === 'postgres' ? 'bigserial' : 'integer';
  const ref = dialect === 'postgres' ? 'bigint' : 'integer';

  await db.schema
    .alterTable('projects')
    .addColumn('allow_private_relays', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();

  await db.schema
    .createTable('sender_domains')
    .addColumn('id', idType as any, (c) => c.primaryKey().$call((b) => (dialect === 'sqlite' ? b.autoIncrement() : b)))
    .addColumn('project_id', ref as any, (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('domain', 'text', (c) => c.notNull())
    // pending | verified (the TXT record was found) | approved (by an owner)
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('checked_at', 'bigint')
    .addColumn('approved_by', 'text')
    .execute();
  await db.schema
    .createIndex('sender_domains_project_domain')
    .on('sender_domains')
    .columns(['project_id', 'domain'])
    .unique()
    .execute();
  await db.schema.createIndex('sender_domains_domain').on('sender_domains').column('domain').execute();

  await db.schema
    .createTable('login_throttle')
    // `a:<sha256 of the account's address>` or `i:<source address>`
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .execute();

  const now = Date.now();
  const wanted = new Map<string, Set<string>>();
  const add = (projectId: unknown, address: unknown) => {
    const d = domainOf(address);
    if (!d) return;
    const key = String(projectId);
    if (!wanted.has(key)) wanted.set(key, new Set());
    wanted.get(key)!.add(d);
  };
  for (const p of await db.selectFrom('projects').select(['id', 'from_email', 'reply_to']).execute()) {
    add(p.id, p.from_email);
    add(p.id, p.reply_to);
  }
  for (const r of await db.selectFrom('project_delivery').select(['project_id', 'settings']).execute()) {
    let s: Record<string, unknown> | null;
    try {
      s = JSON.parse(String(r.settings)) as Record<string, unknown>;
    } catch {
      s = null;
    }
    if (!s) continue;
    add(r.project_id, s.from_email);
    add(r.project_id, s.reply_to);
  }
  for (const [projectId, domains] of wanted)
    for (const domain of domains)
      await db
        .insertInto('sender_domains')
        .values({
          project_id: Number(projectId),
          domain,
          status: 'approved',
          token: randomBytes(16).toString('hex'),
          created_at: now,
          updated_at: now,
          checked_at: null,
          approved_by: 'upgrade',
        })
        .execute();
}
