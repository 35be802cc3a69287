// Sender domains (SPEC §21): a project sends only from domains verified for it (a TXT record at
// `_edu-mail-gateway.<domain>` holding the value shown) or approved by an owner. A domain verified or
// approved for one project is 409 `domain_taken` for another unless an owner approves it there too.
// An owner's own change of a sender address approves its domain (audited), so the installation's owners
// and scripts (the root token) are never stopped; a project administrator must verify.
import { randomBytes } from 'node:crypto';
import { Resolver } from 'node:dns/promises';
import { domainToASCII } from 'node:url';
import type { Project } from '../db/schema.js';
import { AppError, notFound, validationError } from '../errors.js';
import {
  findDomain,
  holdersElsewhere,
  insertDomainIfAbsent,
  listDomains,
  setDomainStatus,
  type SenderDomainRow,
} from '../repos/senderDomains.js';
import { iso, type Executor } from '../repos/types.js';
import type { TxtLookup } from '../delivery/verify.js';
import { requireProject } from './admin.js';
import { audited, type AuditActor, type Note } from './audit.js';
import type { Deps } from './context.js';

export const TXT_PREFIX = '_edu-mail-gateway';
const VALUE_PREFIX = 'edu-mail-gateway-verification=';

/** A domain as stored: lower case, IDN as punycode; null when it is no domain name. */
export function normalDomain(raw: string): string | null {
  const ascii = domainToASCII(raw.trim().toLowerCase().replace(/\.$/, ''));
  return ascii && /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]{2,63}$/.test(ascii) ? ascii : null;
}

export const domainOfAddress = (address: string) => normalDomain(address.slice(address.lastIndexOf('@') + 1));

export function domainView(d: SenderDomainRow) {
  return {
    domain: d.domain,
    status: d.status,
    txt_name: `${TXT_PREFIX}.${d.domain}`,
    txt_value: `${VALUE_PREFIX}${d.token}`,
    checked_at: iso(d.checked_at),
    approved_by: d.approved_by,
    created_at: iso(d.created_at)!,
  };
}

/** The TXT lookups of the verify step: DNS_SERVERS when set, else the system's; tests may inject one. */
function txtLookup(deps: Deps): TxtLookup {
  if (deps.dnsTxt) return deps.dnsTxt;
  const r = new Resolver({ timeout: 3000, tries: 2 });
  if (deps.config.tenants.dnsServers.length) r.setServers(deps.config.tenants.dnsServers);
  return (name) => r.resolveTxt(name);
}

const badDomain = () =>
  validationError(
    { reason: 'domain_invalid', params: { field: 'domain' } },
    { invalid_fields: { domain: 'not a domain name' } },
  );

const taken = (domain: string) =>
  new AppError(409, 'domain_taken', { reason: 'domain_taken', params: { domain } }, { domain });

export async function listProjectDomains(deps: Deps, siteKey: string) {
  const project = await requireProject(deps.db.db, siteKey);
  return { ok: true as const, items: (await listDomains(deps.db.db, project.id)).map(domainView) };
}

export async function addDomain(deps: Deps, who: AuditActor, siteKey: string, raw: string) {
  const domain = normalDomain(raw);
  if (!domain) throw badDomain();
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    const existing = await findDomain(trx, project.id, domain);
    if (existing) return domainView(existing);
    const row = await insertDomainIfAbsent(
      trx,
      { project_id: project.id, domain, status: 'pending', token: randomBytes(16).toString('hex'), approved_by: null },
      deps.clock.now(),
    );
    // Added meanwhile by a concurrent request (which audited it): the same answer as when found.
    if (!row) return domainView((await findDomain(trx, project.id, domain))!);
    note({ action: 'domain.add', site_key: project.site_key, target: `domain:${domain}`, after: domainView(row) });
    return domainView(row);
  });
}

async function requireDomain(db: Executor, project: Project, raw: string) {
  const domain = normalDomain(raw);
  const row = domain ? await findDomain(db, project.id, domain) : undefined;
  if (!row) throw notFound(`Domain ${raw} of project ${project.site_key}`);
  return row;
}

/** Looks the TXT record up (outside any transaction), then records the outcome. */
export async function verifyDomain(deps: Deps, who: AuditActor, siteKey: string, raw: string) {
  const project = await requireProject(deps.db.db, siteKey);
  const row = await requireDomain(deps.db.db, project, raw);
  const view = domainView(row);
  let found: string[];
  try {
    found = (await txtLookup(deps)(view.txt_name)).map((parts) => parts.join(''));
  } catch {
    found = [];
  }
  const ok = found.includes(view.txt_value);
  return audited(deps, who, async (trx, note) => {
    const now = deps.clock.now();
    if (ok && row.status === 'pending') {
      if ((await holdersElsewhere(trx, project.id, row.domain)).length) throw taken(row.domain);
      await setDomainStatus(trx, row.id, { status: 'verified', checked_at: now }, now);
    } else await setDomainStatus(trx, row.id, { checked_at: now }, now);
    const after = domainView((await findDomain(trx, project.id, row.domain))!);
    note({ action: 'domain.verify', site_key: project.site_key, target: `domain:${row.domain}`, before: view, after });
    return { ...after, found: ok };
  });
}

/** An owner approves a domain for the project (also one another project holds). */
export async function approveDomain(deps: Deps, who: AuditActor, siteKey: string, raw: string) {
  const domain = normalDomain(raw);
  if (!domain) throw badDomain();
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    return approveIn(trx, deps.clock.now(), who, project, domain, note);
  });
}

async function approveIn(trx: Executor, now: number, who: AuditActor, project: Project, domain: string, note: Note) {
  let before = await findDomain(trx, project.id, domain);
  if (!before) {
    const row = { project_id: project.id, domain, token: randomBytes(16).toString('hex') };
    const added = await insertDomainIfAbsent(trx, { ...row, status: 'approved', approved_by: who.actor }, now);
    // Nothing added: a concurrent change added the domain since; it is approved below like one found.
    if (!added) before = await findDomain(trx, project.id, domain);
  }
  if (before && before.status !== 'pending') return domainView(before);
  if (before) await setDomainStatus(trx, before.id, { status: 'approved', approved_by: who.actor }, now);
  const after = domainView((await findDomain(trx, project.id, domain))!);
  note({
    action: 'domain.approve',
    site_key: project.site_key,
    target: `domain:${domain}`,
    before: before ? domainView(before) : null,
    after,
  });
  return after;
}

/**
 * The sender addresses of a change (`from_email`, `reply_to`): each domain must be verified or approved
 * for the project, else 422 `sender_domain_unverified` naming the member. An owner's change approves
 * the domains it names instead (audited in the same transaction).
 */
export async function requireSenderDomains(
  trx: Executor,
  ctx: { now: number; who: AuditActor; owner: boolean; note: Note },
  project: Project,
  addresses: Record<string, string | null | undefined>,
): Promise<void> {
  for (const [member, address] of Object.entries(addresses)) {
    if (!address) continue;
    const domain = domainOfAddress(address);
    if (!domain) continue; // the address check of the member says what is wrong
    const row = await findDomain(trx, project.id, domain);
    if (row && row.status !== 'pending') continue;
    if (ctx.owner) {
      await approveIn(trx, ctx.now, ctx.who, project, domain, ctx.note);
      continue;
    }
    throw new AppError(
      422,
      'sender_domain_unverified',
      { reason: 'sender_domain_unverified', params: { field: member, domain } },
      { invalid_fields: { [member]: `${domain} is not verified for this project` } },
    );
  }
}
