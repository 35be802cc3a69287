// The example project of the API document, loaded by `demo`. Loading twice changes nothing: every
// object is found by its natural key first. The full keys are printed only when they are created.
import { sql } from 'kysely';
import { EXTRA_EVENT_TYPES, KNOWN_TEMPLATE_KEYS } from '../domain/catalog.js';
import { createList } from '../repos/contacts.js';
import { listKeys } from '../repos/keys.js';
import { findProjectBySiteKey, upsertProject } from '../repos/projects.js';
import { findTemplateByName, upsertTemplate } from '../repos/templates.js';
import type { Rights } from '../schemas/common.js';
import { createApiKey, setCourseCategories, setPaidLists, setRouting } from './admin.js';
import type { Deps } from './context.js';

export const DEMO_SITE = {
  site_key: 'demo-courses',
  name: 'Demo pedagogical courses',
  from_email: 'noreply@courses.example',
};

/** id -> list_id, slug, title, as the document gives them. */
export const DEMO_CATEGORIES = [
  ['1', 35, 'pedagog-doshkolnogo-obrazovaniya', 'preschool educator'],
  ['2', 36, 'pegagog-nachalnoi-shkoly', 'primary-school teacher'],
  ['3', 37, 'pedagog-obshchego-obrazovaniya', 'general-education teacher'],
  ['4', 38, 'pedagog-dopolnitelnogo-obrazovaniya', 'teacher of additional education'],
  ['5', 39, 'pedagog-psikholog-psikholog', 'educational psychologist'],
  ['6', 40, 'prepodavatel-spo-i-vo', 'vocational/higher-education lecturer'],
  ['7', 41, 'sotsialnyy-pedagog', 'social pedagogue'],
  ['8', 42, 'uchitel-logoped-defektolog', 'speech therapist/defectologist'],
  ['9', 43, 'administraciya-oo-direktor-zaveduyushchiy-zavuch-starshiy-vospitatel', 'school administration'],
  ['10', 44, 'bibliotekar', 'librarian'],
  ['11', 45, 'metodist', 'methodist'],
  ['12', 46, 'pedagog-organizator', 'organizer-teacher'],
] as const;

/** Routing key -> [template name, subject]. Template names are the document's template keys. */
export const DEMO_ROUTES: Record<string, [string, string]> = {
  course_abandoned_cart_1h: ['course_abandoned_cart_1h', '{{ name }}, your order for {{ course_name }} is waiting'],
  course_abandoned_cart_1d: ['course_abandoned_cart_1d', '{{ name }}, finish enrolling in {{ course_name }}'],
  course_abandoned_cart_3d: ['course_abandoned_cart_3d', 'Last reminder: {{ course_name }}'],
  course_order_created: ['course_application_created', '{{ name }}, your application for {{ course_name }} is formed'],
  course_document_ready: [
    'course_completed_passed_document_ready',
    '{{ name }}, your document for {{ course_name }} is ready',
  ],
  course_finished_test_missing: [
    'course_completed_test_not_passed',
    '{{ name }}, the training period of {{ course_name }} is over',
  ],
  course_paid: ['course_payment_success', '{{ name }}, payment for {{ course_name }} received'],
  course_test_failed: ['course_test_failed', '{{ name }}, the test of {{ course_name }} was not passed'],
  course_test_passed: ['course_test_passed', '{{ name }}, you passed the test of {{ course_name }}'],
  course_track_number: ['course_track_number', '{{ name }}, your document for {{ course_name }} is on its way'],
  form_lead_collective_notify: ['form_lead_collective_notify', 'Group training application from {{ name }}'],
  portal_abandoned_cart_1h: ['portal_abandoned_cart_1h', '{{ name }}, your order is waiting'],
  portal_abandoned_cart_1d: ['portal_abandoned_cart_1d', '{{ name }}, complete your order'],
  portal_abandoned_cart_3d: ['portal_abandoned_cart_3d', 'Last reminder about your order'],
  contest_results: ['portal_contest_results', '{{ name }}, the results of the contest are final'],
  contest_work_accepted: ['portal_contest_work_accepted', '{{ name }}, your contest work is accepted'],
  olympiad_results: ['portal_olympiad_results', '{{ name }}, your olympiad results'],
  diploma_paid: ['portal_payment_success', '{{ name }}, payment received'],
  publication_site_submitted: ['portal_publication_status', '{{ name }}, we received "{{ publication_title }}"'],
};

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

function html(subject: string): string {
  return `<p>Hello, {{ name }}!</p>\n<p>${subject.replace(/\{\{ name \}\},? ?/, '')}</p>\n{% if pay_url %}<p><a href="{{ pay_url }}">Pay for the order</a></p>{% endif %}\n{% if document_url %}<p><a href="{{ document_url }}">Your document</a></p>{% endif %}\n{% if account_url %}<p><a href="{{ account_url }}">Your account</a></p>{% endif %}\n<p>{{ project_name }}</p>\n{% if unsubscribe_url %}<p style="font-size:12px"><a href="{{ unsubscribe_url }}">Unsubscribe</a></p>{% endif %}`;
}

function text(subject: string): string {
  return `Hello, {{ name }}!\n\n${subject.replace(/\{\{ name \}\},? ?/, '')}\n{% if pay_url %}\nPay: {{ pay_url }}{% endif %}{% if document_url %}\nDocument: {{ document_url }}{% endif %}\n\n{{ project_name }}{% if unsubscribe_url %}\nUnsubscribe: {{ unsubscribe_url }}{% endif %}\n`;
}

export interface DemoResult {
  site_key: string;
  created: boolean;
  keys: { name: string; key: string | null; last4: string }[];
}

export async function loadDemo(deps: Deps): Promise<DemoResult> {
  const db = deps.db.db;
  const now = deps.clock.now();
  const existed = Boolean(await findProjectBySiteKey(db, DEMO_SITE.site_key));
  const { project } = await upsertProject(db, DEMO_SITE, now);

  // Category books keep the document's list ids where those ids are free in this database.
  for (const [, listId, slug] of DEMO_CATEGORIES) {
    const taken = await db.selectFrom('lists').select('id').where('id', '=', listId).executeTakeFirst();
    await createList(db, project.id, slug, now, taken ? undefined : listId);
  }
  if (deps.db.dialect === 'postgres') {
    await sql`select setval(pg_get_serial_sequence('lists', 'id'), greatest((select max(id) from lists), 1))`.execute(
      db,
    );
  }
  const general = (await createList(db, project.id, 'successful-course-payments', now)).list;
  const subscribers = (await createList(db, project.id, 'site-subscribers', now)).list;
  const categories = [];
  for (const [id, , slug, title] of DEMO_CATEGORIES) {
    const list = (await createList(db, project.id, slug, now)).list;
    categories.push({ id, list_id: list.id, slug, title });
  }
  await setCourseCategories(deps, project.site_key, categories);
  await setPaidLists(deps, project.site_key, { course: general.id });

  for (const [name, subject] of Object.values(DEMO_ROUTES)) {
    if (!(await findTemplateByName(db, project.id, name))) {
      await upsertTemplate(db, project.id, { name, subject, html: html(subject), text: text(subject) }, now);
    }
  }
  await setRouting(deps, project.site_key, Object.fromEntries(Object.entries(DEMO_ROUTES).map(([k, [t]]) => [k, t])));

  const wanted: { name: string; rights: Rights }[] = [
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
        list_id: subscribers.id,
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
  const existing = await listKeys(db, project.id);
  const keys: DemoResult['keys'] = [];
  for (const w of wanted) {
    const found = existing.find((k) => k.name === w.name);
    if (found) keys.push({ name: w.name, key: null, last4: found.last4 });
    else {
      const k = await createApiKey(deps, { site_key: project.site_key, name: w.name, rights: w.rights });
      keys.push({ name: w.name, key: k.key, last4: k.last4 });
    }
  }
  return { site_key: project.site_key, created: !existed, keys };
}
