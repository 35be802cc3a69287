// The example project of the API document, loaded by `demo`, in Russian as that project writes to its
// customers (SPEC §15). It is loaded once: when the project exists, `demo` changes nothing of it and
// says what it found. The full keys are printed only when they are created.
import { sql } from 'kysely';
import type { Project } from '../db/schema.js';
import { EXTRA_EVENT_TYPES, KNOWN_TEMPLATE_KEYS } from '../domain/catalog.js';
import { generateKey, hashKey, last4 } from '../domain/keys.js';
import { createList } from '../repos/contacts.js';
import { insertKey, listKeys } from '../repos/keys.js';
import { getPaidLists, replaceCourseCategories, replacePaidLists } from '../repos/projectConfig.js';
import { findProjectBySiteKey, updateProject, upsertProject } from '../repos/projects.js';
import { replaceRoutes } from '../repos/templates.js';
import { upsertLayout } from '../repos/layouts.js';
import { publishTemplateIn } from './templates.js';
import type { Executor } from '../repos/types.js';
import type { Rights } from '../schemas/common.js';
import type { Deps } from './context.js';
import { audited, type AuditActor } from './audit.js';
import { requireSenderDomains } from './senderDomains.js';
import { DEMO_LAYOUT, DEMO_TEMPLATES, demoHtml, demoText } from './demoTemplates.js';

export const DEMO_SITE = {
  site_key: 'demo-courses',
  // The project's name is the sender's display name of its e-mails.
  name: 'Педагогические курсы (демо)',
  from_email: 'noreply@courses.example',
  // Answers to a noreply sender reach people here (issue 24: receivers and customers expect one).
  reply_to: 'support@courses.example',
  locale: 'ru' as const,
  timezone: 'Europe/Moscow',
};

/**
 * id -> list_id, slug, title. Ids, list ids and slugs as the document gives them; the titles are the
 * Russian ones its slugs transliterate (the document renders them in English).
 */
export const DEMO_CATEGORIES = [
  ['1', 35, 'pedagog-doshkolnogo-obrazovaniya', 'Педагог дошкольного образования'],
  ['2', 36, 'pegagog-nachalnoi-shkoly', 'Педагог начальной школы'],
  ['3', 37, 'pedagog-obshchego-obrazovaniya', 'Педагог общего образования'],
  ['4', 38, 'pedagog-dopolnitelnogo-obrazovaniya', 'Педагог дополнительного образования'],
  ['5', 39, 'pedagog-psikholog-psikholog', 'Педагог-психолог, психолог'],
  ['6', 40, 'prepodavatel-spo-i-vo', 'Преподаватель СПО и ВО'],
  ['7', 41, 'sotsialnyy-pedagog', 'Социальный педагог'],
  ['8', 42, 'uchitel-logoped-defektolog', 'Учитель-логопед, дефектолог'],
  [
    '9',
    43,
    'administraciya-oo-direktor-zaveduyushchiy-zavuch-starshiy-vospitatel',
    'Администрация ОО (директор, заведующий, завуч, старший воспитатель)',
  ],
  ['10', 44, 'bibliotekar', 'Библиотекарь'],
  ['11', 45, 'metodist', 'Методист'],
  ['12', 46, 'pedagog-organizator', 'Педагог-организатор'],
] as const;

const ALLOWED_EVENTS = [
  'course_order_created',
  'course_paid',
  'course_test_passed',
  'course_test_failed',
  'course_document_ready',
  'course_finished_test_missing',
  'course_track_number',
  'diploma_created',
  'diploma_order_created',
  'diploma_paid',
  'olympiad_results',
  'contest_work_accepted',
  'contest_results',
  'publication_site_submitted',
  'publication_site_published',
  'form_lead_collective_notify',
];

/** What the project holds: printed after a first load, and on a rerun as what was found. */
export interface DemoFound {
  name: string;
  locale: string;
  timezone: string;
  templates: number;
  routes: number;
  course_categories: number;
  address_books: number;
  paid_lists: Record<string, number>;
  cart_chains: number;
}

export interface DemoResult {
  site_key: string;
  created: boolean;
  found: DemoFound;
  keys: { name: string; key: string | null; last4: string; status: string }[];
}

async function inventory(db: Executor, project: Project): Promise<DemoFound> {
  const count = async (table: 'templates' | 'routes' | 'course_categories' | 'lists' | 'cart_chains') =>
    Number(
      (
        await db
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('project_id', '=', project.id)
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    name: project.name,
    locale: project.locale,
    timezone: project.timezone,
    templates: await count('templates'),
    routes: await count('routes'),
    course_categories: await count('course_categories'),
    address_books: await count('lists'),
    paid_lists: await getPaidLists(db, project.id),
    cart_chains: await count('cart_chains'),
  };
}

/**
 * Loads the example project once, all of it in one transaction. When the project exists, nothing of
 * it is touched (SPEC §15): what an administrator changed or deleted since stays so, and the result
 * says what was found.
 */
export async function loadDemo(deps: Deps, who: AuditActor): Promise<DemoResult> {
  const existing = await findProjectBySiteKey(deps.db.db, DEMO_SITE.site_key);
  if (existing) {
    const keys = await listKeys(deps.db.db, existing.id);
    return {
      site_key: existing.site_key,
      created: false,
      found: await inventory(deps.db.db, existing),
      keys: keys.map((k) => ({ name: k.name, key: null, last4: k.last4, status: k.status })),
    };
  }
  // The project, everything in it and the audit row saying who loaded it commit together (SPEC §14).
  return audited(deps, who, async (trx, note) => {
    const now = deps.clock.now();
    const { project } = await upsertProject(trx, DEMO_SITE, now);
    // The demo's own sender domain is approved (audited), so its test sends go out (SPEC §21).
    await requireSenderDomains(trx, { now, who, owner: true, note }, project, {
      from_email: DEMO_SITE.from_email,
      reply_to: DEMO_SITE.reply_to,
    });

    // Category books keep the document's list ids where those ids are free in this database.
    const categories = [];
    for (const [id, listId, slug, title] of DEMO_CATEGORIES) {
      const taken = await trx.selectFrom('lists').select('id').where('id', '=', listId).executeTakeFirst();
      const list = (await createList(trx, project.id, slug, now, taken ? undefined : listId)).list;
      categories.push({ id, list_id: list.id, slug, title });
    }
    if (deps.db.dialect === 'postgres') {
      await sql`select setval(pg_get_serial_sequence('lists', 'id'), greatest((select max(id) from lists), 1))`.execute(
        trx,
      );
    }
    const general = (await createList(trx, project.id, 'successful-course-payments', now)).list;
    const subscribers = (await createList(trx, project.id, 'site-subscribers', now)).list;
    await replaceCourseCategories(trx, project.id, categories);
    await replacePaidLists(trx, project.id, { course: general.id });

    // A Russian layout (project name, signature, unsubscribe footer on cart mail) is the project's default;
    // the templates are analysed and published as version 1 like any saved through the API (SPEC §16).
    await upsertLayout(trx, project.id, DEMO_LAYOUT, now);
    const framed = await updateProject(trx, project, { default_layout: DEMO_LAYOUT.name }, now);
    const routes = [];
    for (const [routingKey, [name, spec]] of Object.entries(DEMO_TEMPLATES)) {
      const t = await publishTemplateIn(
        trx,
        framed,
        { name, subject: spec.subject, html: demoHtml(spec), text: demoText(spec), tracking: spec.tracking },
        who.actor,
        now,
      );
      routes.push({ routing_key: routingKey, template_id: t.id });
    }
    await replaceRoutes(trx, project.id, routes);

    const keys: DemoResult['keys'] = [];
    for (const w of wantedKeys(subscribers.id)) {
      const key = generateKey();
      await insertKey(
        trx,
        { project_id: project.id, name: w.name, key_hash: hashKey(key), last4: last4(key), rights: w.rights },
        now,
      );
      keys.push({ name: w.name, key, last4: last4(key), status: 'active' });
    }
    const found = await inventory(trx, project);
    // Counts only: the keys themselves are printed once and never stored or logged.
    note({
      action: 'demo.load',
      site_key: project.site_key,
      target: `project:${project.id}`,
      after: { ...found, keys_created: keys.length },
    });
    return { site_key: project.site_key, created: true, found, keys };
  });
}

function wantedKeys(subscribersListId: number): { name: string; rights: Rights }[] {
  return [
    {
      name: 'site backend: transactional + carts',
      rights: {
        permissions: ['transactional_send', 'cart_events_write'],
        allowed_api_events: ALLOWED_EVENTS,
        allowed_template_keys: [],
        allowed_cart_types: ['course', 'diploma'],
        note: 'transactional events and course/diploma carts',
      },
    },
    {
      name: 'course carts only',
      rights: {
        permissions: ['cart_events_write'],
        allowed_api_events: [],
        allowed_template_keys: [],
        allowed_cart_types: ['course'],
        note: 'course carts',
      },
    },
    {
      name: 'address book writer',
      rights: {
        permissions: ['list_contacts_write'],
        allowed_api_events: [],
        allowed_template_keys: [],
        allowed_cart_types: [],
        list_id: subscribersListId,
        note: 'add or upsert contacts into one address book',
      },
    },
    {
      name: 'transactional with template keys',
      rights: {
        permissions: ['transactional_send'],
        allowed_api_events: [...ALLOWED_EVENTS, ...EXTRA_EVENT_TYPES.filter((e) => !ALLOWED_EVENTS.includes(e))],
        allowed_template_keys: [...KNOWN_TEMPLATE_KEYS],
        allowed_cart_types: [],
        note: 'transactional only, no carts',
      },
    },
  ];
}

/** The lines `demo` prints: what was loaded, or what was found and that nothing changed. */
export function describeDemo(r: DemoResult): string[] {
  const f = r.found;
  const paid = Object.entries(f.paid_lists).map(([cart, id]) => `${cart} → #${id}`);
  const what =
    `«${f.name}», locale ${f.locale}, time zone ${f.timezone}; ${f.templates} templates, ${f.routes} routes, ` +
    `${f.course_categories} course categories, ${f.address_books} address books, ` +
    `paid-order books: ${paid.length ? paid.join(', ') : 'none'}, ${f.cart_chains} cart-chain sequences, ` +
    `${r.keys.length} keys.`;
  const lines = r.created
    ? [`Loaded the example project "${r.site_key}": ${what}`]
    : [
        `The example project "${r.site_key}" is already loaded; nothing changed.`,
        `Found: ${what}`,
        'demo never changes an existing project: what an administrator changed or deleted stays so.',
      ];
  for (const k of r.keys) {
    lines.push(
      k.key
        ? `  ${k.name}: ${k.key}`
        : `  ${k.name}: …${k.last4}${k.status === 'active' ? '' : ` (${k.status})`} (shown only when it was created)`,
    );
  }
  if (r.keys.some((k) => k.key)) lines.push('Store these keys now: they are not shown again.');
  return lines;
}
