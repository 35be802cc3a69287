// Which content an e-mail is rendered from (SPEC §16): the template's published version at send time
// (the templates row), or, for a test send that asked for one, that version; and the layout it names,
// else the project's default.
import type { EmailRow, LayoutRow, Project, TemplateRow } from '../db/schema.js';
import { findLayout } from '../repos/layouts.js';
import { findVersion } from '../repos/templateVersions.js';
import type { Executor } from '../repos/types.js';
import type { EmailSource, LayoutSource } from './render.js';

export interface EmailContent {
  source: EmailSource & { variables: string | null; layout: string | null };
  layout: LayoutSource | null;
  version: number | null;
  /**
   * Names this content for the render plan cache (renderPlan.ts): the published row changes with its
   * updated_at, a saved version never changes, a layout changes with its updated_at.
   */
  planKey: string;
}

export async function emailContent(
  db: Executor,
  row: Pick<EmailRow, 'template_version' | 'is_test'>,
  template: TemplateRow,
  project: Pick<Project, 'id' | 'default_layout'>,
  layouts: Map<string, Promise<LayoutRow | undefined>> = new Map(),
): Promise<EmailContent> {
  let source: EmailContent['source'] = template;
  let sourceKey = `t${template.id}.${template.updated_at}`;
  let version = template.version === null ? null : Number(template.version);
  const asked = row.template_version === null ? null : Number(row.template_version);
  // Only a test send renders a version other than the published one (a draft being tried).
  if (row.is_test && asked !== null && asked !== version) {
    const v = await findVersion(db, template.id, asked);
    if (!v) throw new Error(`version ${asked} of template ${template.name} does not exist`);
    source = v;
    version = asked;
    sourceKey = `v${v.id}`;
  }
  const layoutName = source.layout ?? project.default_layout;
  let layout: LayoutRow | undefined;
  if (layoutName) {
    const key = `${project.id}\n${layoutName}`;
    let p = layouts.get(key);
    if (!p) layouts.set(key, (p = findLayout(db, project.id, layoutName)));
    layout = await p;
    if (!layout) throw new Error(`layout ${layoutName} does not exist`);
  }
  const planKey = `${sourceKey}/${layout ? `l${layout.id}.${layout.updated_at}` : '-'}`;
  return { source, layout: layout ?? null, version, planKey };
}
