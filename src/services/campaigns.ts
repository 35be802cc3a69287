// Legacy automation endpoints: sequences (and the cart chain they can replace), campaigns, statistics.
import { lockProjectConfig } from '../db/index.js';
import { CART_TYPES } from '../domain/catalog.js';
import { notFound, validationError } from '../errors.js';
import {
  campaignCounts,
  fanOutCampaign,
  findCampaign,
  insertCampaign,
  overview as figures,
} from '../repos/campaigns.js';
import { findList } from '../repos/contacts.js';
import { insertSequence, listSequences, replaceCartChains, type SequenceStep } from '../repos/projectConfig.js';
import { findTemplate } from '../repos/templates.js';
import { iso } from '../repos/types.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';

async function checkTemplates(deps: Deps, projectId: number, steps: SequenceStep[]): Promise<void> {
  const invalid: Record<string, string> = {};
  for (const [i, s] of steps.entries()) {
    const t = await findTemplate(deps.db.db, s.template_id);
    if (!t || t.project_id !== projectId)
      invalid[`steps.${i}.template_id`] = `no template ${s.template_id} in this project`;
  }
  if (Object.keys(invalid).length)
    throw validationError('The sequence refers to unknown templates', { invalid_fields: invalid });
}

export async function createSequence(deps: Deps, input: { site_key: string; name: string; steps: SequenceStep[] }) {
  const project = await requireProject(deps.db.db, input.site_key);
  await checkTemplates(deps, project.id, input.steps);
  const id = await insertSequence(deps.db.db, project.id, input.name, input.steps, deps.clock.now());
  return { ok: true as const, site_key: project.site_key, sequence_id: id };
}

/** Chooses, per cart type, a sequence that replaces the default 1 h/1 d/3 d chain (null: default). */
export async function setCartChains(deps: Deps, siteKey: string, chains: Record<string, number | null>) {
  // One transaction, serialised per project: concurrent replacements must not interleave their
  // delete and insert.
  return deps.db.db.transaction().execute(async (trx) => {
    const project = await requireProject(trx, siteKey);
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const sequences = new Map((await listSequences(trx, project.id)).map((s) => [s.id, s]));
    const invalid: Record<string, string> = {};
    const kept: Record<string, number> = {};
    for (const [cart, seq] of Object.entries(chains)) {
      if (!(CART_TYPES as readonly string[]).includes(cart)) invalid[`chains.${cart}`] = 'unknown cart type';
      else if (seq !== null && !sequences.has(seq)) invalid[`chains.${cart}`] = `no sequence ${seq} in this project`;
      else if (seq !== null) kept[cart] = seq;
    }
    if (Object.keys(invalid).length)
      throw validationError('The cart chains were not changed', { invalid_fields: invalid });
    await replaceCartChains(trx, project.id, kept);
    return { ok: true as const, site_key: project.site_key, chains: kept };
  });
}

export async function createCampaign(
  deps: Deps,
  input: { site_key: string; template_id: number; list_id: number; send_at?: string },
) {
  const now = deps.clock.now();
  const sendAt = input.send_at ? Date.parse(input.send_at) : now;
  const created = await deps.db.db.transaction().execute(async (trx) => {
    const project = await requireProject(trx, input.site_key);
    const invalid: Record<string, string> = {};
    const template = await findTemplate(trx, input.template_id);
    if (!template || template.project_id !== project.id) invalid.template_id = 'no such template in this project';
    const list = await findList(trx, input.list_id);
    if (!list || list.project_id !== project.id) invalid.list_id = 'no such address book in this project';
    if (Object.keys(invalid).length) throw validationError('The campaign was not created', { invalid_fields: invalid });
    const campaignId = await insertCampaign(
      trx,
      { project_id: project.id, template_id: template!.id, list_id: list!.id, send_at: Math.max(sendAt, now) },
      now,
    );
    const recipients = await fanOutCampaign(
      trx,
      {
        campaignId,
        projectId: project.id,
        templateId: template!.id,
        templateKey: template!.name,
        listId: list!.id,
        sendAt: Math.max(sendAt, now),
      },
      now,
    );
    return {
      ok: true as const,
      site_key: project.site_key,
      campaign_id: campaignId,
      recipients,
      send_at: iso(Math.max(sendAt, now))!,
    };
  });
  deps.delivery?.wake();
  return created;
}

export async function campaignStats(deps: Deps, id: number) {
  const c = await findCampaign(deps.db.db, id);
  if (!c) throw notFound(`Campaign ${id}`);
  const counts = await campaignCounts(deps.db.db, id, deps.clock.now());
  return {
    ok: true as const,
    campaign_id: c.id,
    site_key: c.site_key,
    template_id: c.template_id,
    list_id: c.list_id,
    send_at: iso(c.send_at)!,
    ...counts,
  };
}

/** Service-wide figures (legacy GET /api/stats/overview). */
export async function overview(deps: Deps) {
  return { ok: true as const, ...(await figures(deps.db.db, deps.clock.now())) };
}
