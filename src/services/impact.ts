// The impact check before a template or routing change (SPEC §16): which members the change makes newly
// required for which event, and how many of the project's accepted requests of the last 7 days lacked
// them. One query per event type reads the stored payloads (index events_project_type_created).
import type { Project } from '../db/schema.js';
import { missingMembers, parseVariables, requiredMembers } from '../domain/templateContract.js';
import { needsOf, newlyRequiredByChange, type ImpactDraft, type NeedsConfig } from '../domain/templateNeeds.js';
import { AppError } from '../errors.js';
import { acceptedPayloads } from '../repos/events.js';
import { getCartChains, listSequences } from '../repos/projectConfig.js';
import { getRoutes, listTemplates } from '../repos/templates.js';
import type { Executor } from '../repos/types.js';

export const IMPACT_WINDOW_MS = 7 * 24 * 3600_000;

export interface ImpactEntry {
  event_type: string;
  template_key: string;
  newly_required: string[];
  requests_7d: number;
  would_fail_7d: number;
}

/** The project's configuration as the needs computation reads it. */
export async function loadNeedsConfig(db: Executor, projectId: number): Promise<NeedsConfig> {
  const [routes, chainIds, sequences, templates] = await Promise.all([
    getRoutes(db, projectId),
    getCartChains(db, projectId),
    listSequences(db, projectId),
    listTemplates(db, projectId),
  ]);
  const nameOf = new Map(templates.map((t) => [t.id, t.name]));
  const seqs = new Map(sequences.map((s) => [s.id, s]));
  const chains: Record<string, string[]> = {};
  for (const [cart, seqId] of Object.entries(chainIds))
    chains[cart] = (seqs.get(seqId)?.steps ?? []).flatMap((s) =>
      nameOf.has(s.template_id) ? [nameOf.get(s.template_id)!] : [],
    );
  const required = new Map(templates.map((t) => [t.name, requiredMembers(parseVariables(t.variables))]));
  return { routes, chains, required };
}

const ENDPOINTS: Record<ImpactDraft['endpoint'], string[]> = {
  transactional: ['transactional'],
  'order-created': ['order-created', 'unpaid-order'],
};

/** Counts the drafts' requests and failures over the window: one query per event type. */
export async function countImpact(
  db: Executor,
  projectId: number,
  drafts: ImpactDraft[],
  now: number,
): Promise<ImpactEntry[]> {
  const byEvent = new Map<string, ImpactDraft[]>();
  for (const d of drafts) {
    const k = `${d.endpoint} ${d.event_type}`;
    byEvent.set(k, [...(byEvent.get(k) ?? []), d]);
  }
  const out: ImpactEntry[] = [];
  for (const group of byEvent.values()) {
    const { endpoint, event_type } = group[0];
    const rows = await acceptedPayloads(db, {
      projectId,
      eventType: event_type,
      endpoints: ENDPOINTS[endpoint],
      since: now - IMPACT_WINDOW_MS,
    });
    const counts = group.map(() => 0);
    for (const r of rows) {
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(r.payload ?? '{}') as Record<string, unknown>;
      } catch {
        continue;
      }
      group.forEach((d, i) => {
        if (missingMembers(d.newly_required, body).length) counts[i]++;
      });
    }
    group.forEach((d, i) =>
      out.push({
        event_type: d.event_type,
        template_key: d.template_key,
        newly_required: d.newly_required,
        requests_7d: rows.length,
        would_fail_7d: counts[i],
      }),
    );
  }
  return out;
}

/** The impact of going from one configuration to another; only entries where recent requests would fail. */
export async function impactOfChange(
  db: Executor,
  project: Pick<Project, 'id'>,
  before: NeedsConfig,
  after: NeedsConfig,
  now: number,
): Promise<ImpactEntry[]> {
  const drafts = newlyRequiredByChange(needsOf(before), needsOf(after));
  if (drafts.length === 0) return [];
  return countImpact(db, project.id, drafts, now);
}

/** 409 template_impact when a change would refuse recent requests and the caller did not confirm. */
export function assertNoImpact(impact: ImpactEntry[], confirm: boolean | undefined): void {
  const failing = impact.filter((i) => i.would_fail_7d > 0);
  if (confirm || failing.length === 0) return;
  const first = failing[0];
  throw new AppError(
    409,
    'template_impact',
    {
      reason: 'impact_recent_requests',
      params: {
        would_fail: first.would_fail_7d,
        requests: first.requests_7d,
        event_type: first.event_type,
        fields: first.newly_required.join(', '),
      },
    },
    { impact },
  );
}
