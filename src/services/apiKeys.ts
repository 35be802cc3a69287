// API keys of the projects (SPEC §2): listed without the key itself, created (the key shown once),
// changed and disabled, every change audited. Part of the administration use cases of admin.ts.
import { generateKey, hashKey, last4 } from '../domain/keys.js';
import { notFound, validationError } from '../errors.js';
import type { Project } from '../db/schema.js';
import { findList } from '../repos/contacts.js';
import { findKeyById, insertKey, listKeys, updateKey, type ApiKey } from '../repos/keys.js';
import { findProjectBySiteKey } from '../repos/projects.js';
import { iso, type Executor } from '../repos/types.js';
import type { RateLimit, Rights } from '../schemas/common.js';
import { projectFilter, requireProject } from './admin.js';
import { audited, type AuditActor } from './audit.js';
import type { Deps } from './context.js';

function keyView(k: ApiKey) {
  return {
    id: k.id,
    site_key: k.site_key,
    name: k.name,
    status: k.status,
    last4: k.last4,
    rights: k.rights,
    rate_limit: k.rate_limit,
    created_at: iso(k.created_at)!,
    disabled_at: iso(k.disabled_at),
  };
}

async function checkListRight(db: Executor, project: Project, rights: Rights): Promise<void> {
  if ((rights.permissions ?? []).includes('list_contacts_write') && rights.list_id === undefined) {
    throw validationError(
      { reason: 'list_right_needs_list', params: { field: 'rights.list_id' } },
      { missing_fields: ['rights.list_id'] },
    );
  }
  if (rights.list_id !== undefined) {
    const list = await findList(db, rights.list_id);
    if (!list || list.project_id !== project.id) {
      throw validationError(
        {
          reason: 'list_not_in_project',
          params: { list: rights.list_id, project: project.site_key, field: 'rights.list_id' },
        },
        { invalid_fields: { 'rights.list_id': 'unknown address book of this project' } },
      );
    }
  }
}

/** Keys of one project (by site key) or of all; never the key itself. */
export async function apiKeys(deps: Deps, siteKey?: string, scope: readonly number[] | null = null) {
  const db = deps.db.db;
  return { ok: true as const, items: (await listKeys(db, await projectFilter(db, siteKey, scope))).map(keyView) };
}

/** Creates a key; the full key is in this result only, never stored or shown again. */
export async function createApiKey(
  deps: Deps,
  who: AuditActor,
  input: { site_key: string; name: string; rights: Rights; rate_limit?: RateLimit },
) {
  const key = generateKey();
  const row = await audited(deps, who, async (trx, note) => {
    const project = await requireProject(trx, input.site_key);
    await checkListRight(trx, project, input.rights);
    const id = await insertKey(
      trx,
      {
        project_id: project.id,
        name: input.name,
        key_hash: hashKey(key),
        last4: last4(key),
        rights: input.rights,
        rate_limit: input.rate_limit ?? null,
      },
      deps.clock.now(),
    );
    const view = keyView((await findKeyById(trx, id))!);
    note({ action: 'key.create', site_key: project.site_key, target: `key:${id}`, after: view });
    return view;
  });
  return { ...row, key };
}

export async function changeApiKey(
  deps: Deps,
  who: AuditActor,
  id: number,
  patch: { name?: string; rights?: Rights; rate_limit?: RateLimit | null; status?: 'disabled' },
) {
  return audited(deps, who, async (trx, note) => {
    const existing = await findKeyById(trx, id);
    if (!existing) throw notFound(`API key ${id}`);
    if (patch.rights) await checkListRight(trx, (await findProjectBySiteKey(trx, existing.site_key))!, patch.rights);
    await updateKey(trx, id, patch, deps.clock.now());
    const after = keyView((await findKeyById(trx, id))!);
    note({
      action: patch.status === 'disabled' ? 'key.disable' : 'key.update',
      site_key: existing.site_key,
      target: `key:${id}`,
      before: keyView(existing),
      after,
    });
    return after;
  });
}
