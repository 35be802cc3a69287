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
import { listTopics } from '../repos/consent.js';
import { topicOf } from '../domain/consent.js';
import {
  getCartChains,
  insertSequence,
  listSequences,
  replaceCartChains,
  type SequenceStep,
} from '../repos/projectConfig.js';
import { findTemplate, listTemplates } from '../repos/templates.js';
import { iso, type Executor } from '../repos/types.js';
import { requireProject } from './admin.js';
import type { Deps } from './context.js';
import { audited, type AuditActor } from './audit.js';
import { assertNoImpact, impactOfChange, loadNeedsConfig } from './impact.js';

async function checkTemplates(db: Executor, projectId: number, steps: SequenceStep[]): Promise<void> {
  const invalid: Record<string, string> = {};
  for (const [i, s] of steps.entries()) {
    const t = await findTemplate(db, s.template_id);
    if (!t || t.project_id !== projectId)
      invalid[`steps.${i}.template_id`] = `no template ${s.template_id} in this project`;
  }
  if (Object.keys(invalid).length)
    throw validationError({ reason: 'sequence_templates_unknown' }, { invalid_fields: invalid });
}

export async function createSequence(
  deps: Deps,
  who: AuditActor,
  input: { site_key: string; name: string; steps: SequenceStep[] },
) {
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, input.site_key);
    await checkTemplates(trx, project.id, input.steps);
    const id = await insertSequence(trx, project.id, input.name, input.steps, deps.clock.now());
    note({
      action: 'sequence.create',
      site_key: project.site_key,
      target: `sequence:${id}`,
      after: { sequence_id: id, name: input.name, steps: input.steps },
    });
    return { ok: true as const, site_key: project.site_key, sequence_id: id };
  });
}

/** Chooses, per cart type, a sequence that replaces the default 1 h/1 d/3 d chain (null: default). */
export async function setCartChains(
  deps: Deps,
  who: AuditActor,
  siteKey: string,
  chains: Record<string, number | null>,
  confirm?: boolean,
) {
  // One transaction, serialised per project: concurrent replacements must not interleave their
  // delete and insert.
  return audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, siteKey);
    await lockProjectConfig(trx, deps.db.dialect, project.id);
    const before = await getCartChains(trx, project.id);
    const sequences = new Map((await listSequences(trx, project.id)).map((s) => [s.id, s]));
    const invalid: Record<string, string> = {};
    const kept: Record<string, number> = {};
    for (const [cart, seq] of Object.entries(chains)) {
      if (!(CART_TYPES as readonly string[]).includes(cart)) invalid[`chains.${cart}`] = 'unknown cart type';
      else if (seq !== null && !sequences.has(seq)) invalid[`chains.${cart}`] = `no sequence ${seq} in this project`;
      else if (seq !== null) kept[cart] = seq;
    }
    if (Object.keys(invalid).length)
      throw validationError({ reason: 'cart_chains_invalid' }, { invalid_fields: invalid });
    // SPEC §16: a chain whose templates newly require members is refused while recent orders lacked them.
    const needs = await loadNeedsConfig(trx, project.id);
    const names = new Map((await listTemplates(trx, project.id)).map((t) => [t.id, t.name]));
    const chainNames = Object.fromEntries(
      Object.entries(kept).map(([cart, seq]) => [
        cart,
        (sequences.get(seq)?.steps ?? []).flatMap((st) =>
          names.has(st.template_id) ? [names.get(st.template_id)!] : [],
        ),
      ]),
    );
    const impact = await impactOfChange(trx, project, needs, { ...needs, chains: chainNames }, deps.clock.now());
    assertNoImpact(impact, confirm);
    await replaceCartChains(trx, project.id, kept);
    const after = await getCartChains(trx, project.id);
    note({ action: 'cart_chains.replace', site_key: project.site_key, before, after });
    return { ok: true as const, site_key: project.site_key, chains: kept };
  });
}

export async function createCampaign(
  deps: Deps,
  who: AuditActor,
  input: { site_key: string; template_id: number; list_id: number; send_at?: string },
) {
  const now = deps.clock.now();
  const sendAt = input.send_at ? Date.parse(input.send_at) : now;
  const created = await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, input.site_key);
    const invalid: Record<string, string> = {};
    const template = await findTemplate(trx, input.template_id);
    if (!template || template.project_id !== project.id) invalid.template_id = 'no such template in this project';
    const list = await findList(trx, input.list_id);
    if (!list || list.project_id !== project.id) invalid.list_id = 'no such address book in this project';
    if (Object.keys(invalid).length) throw validationError({ reason: 'campaign_invalid' }, { invalid_fields: invalid });
    const topic = topicOf(template!.topic, 'campaign');
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
        topic,
        requireConsent: (await listTopics(trx, project.id)).find((t) => t.key === topic)?.require_consent ?? false,
      },
      now,
    );
    const answer = {
      ok: true as const,
      site_key: project.site_key,
      campaign_id: campaignId,
      recipients,
      send_at: iso(Math.max(sendAt, now))!,
    };
    note({
      action: 'campaign.create',
      site_key: project.site_key,
      target: `campaign:${campaignId}`,
      after: {
        campaign_id: campaignId,
        template_id: template!.id,
        template_name: template!.name,
        list_id: list!.id,
        recipients,
        send_at: answer.send_at,
      },
    });
    return answer;
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
