// Templates, their versions and layouts, and the configuration that routes events to them.
// Times are integer milliseconds since the epoch; JSON documents are text (see ../schema.ts).
import type { Generated } from 'kysely';
import type { Flag } from '../flags.js';

export interface TemplatesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  subject: string;
  html: string;
  text: string;
  created_at: number;
  updated_at: number;
  /** Consent topic key (SPEC §18); null = the default for the template's use (migration 015). */
  topic: Generated<string | null>;
  /** 1 = opens and clicks tracked (SPEC §17), 0 = never (documents, passwords). */
  tracking: Generated<Flag>;
  /** JSON [{name, required}] of the published version; null: saved before migration 017, unchecked. */
  variables: Generated<string | null>;
  /** The published version (migration 017); the row holds its content. */
  version: Generated<number | null>;
  layout: Generated<string | null>;
  format: Generated<TemplateFormat>;
  /** MJML compiled to HTML at save (format mjml); null for html. */
  compiled_html: Generated<string | null>;
}

export type TemplateFormat = 'html' | 'mjml';

/** Every saved version of a template, immutable (SPEC §16, migration 017). */
export interface TemplateVersionsTable {
  id: Generated<number>;
  template_id: number;
  project_id: number;
  version: number;
  subject: string;
  html: string;
  compiled_html: string | null;
  text: string;
  layout: string | null;
  format: TemplateFormat;
  topic: string | null;
  tracking: Flag;
  variables: string | null;
  actor: string | null;
  created_at: number;
}

export interface TemplateLayoutsTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  html: string;
  text: string;
  created_at: number;
  updated_at: number;
}

export interface RoutesTable {
  project_id: number;
  routing_key: string;
  template_id: number;
}

export interface CourseCategoriesTable {
  project_id: number;
  category_id: string;
  list_id: number;
  slug: string;
  title: string;
}

export interface PaidListsTable {
  project_id: number;
  cart_type: string;
  list_id: number;
}

export interface SequencesTable {
  id: Generated<number>;
  project_id: number;
  name: string;
  steps: string;
  created_at: number;
}

export interface CartChainsTable {
  project_id: number;
  cart_type: string;
  sequence_id: number;
}
