// The event catalog, extra event types, cart types and routing keys exactly as the API document lists
// them. Data, not logic: validation, rights and routing read from here.

export interface CatalogEvent {
  event_type: string;
  description: string;
  /** Required members of `fields` (without the prefix). */
  fields: string[];
}

const course = ['course_name'];
const event = ['event_title'];
const contest = ['event_title', 'work_title'];
const publication = ['publication_title'];

export const CATALOG: readonly CatalogEvent[] = [
  {
    event_type: 'qualification_course_order_created',
    description: 'right after an unpaid order for a qualification-improvement course is created',
    fields: course,
  },
  {
    event_type: 'qualification_course_paid',
    description: 'after successful payment of that course is confirmed',
    fields: course,
  },
  {
    event_type: 'qualification_course_document_ready',
    description: 'the certificate/document is produced and available',
    fields: course,
  },
  {
    event_type: 'retraining_course_order_created',
    description: 'right after an unpaid professional-retraining order is created',
    fields: course,
  },
  { event_type: 'retraining_course_paid', description: 'after successful payment is confirmed', fields: course },
  {
    event_type: 'retraining_course_document_ready',
    description: 'the diploma/document is produced and available',
    fields: course,
  },
  {
    event_type: 'professional_training_order_created',
    description: 'right after an unpaid professional-training order is created',
    fields: course,
  },
  { event_type: 'professional_training_paid', description: 'after successful payment is confirmed', fields: course },
  {
    event_type: 'professional_training_document_ready',
    description: 'the document is produced and available',
    fields: course,
  },
  {
    event_type: 'olympiad_participation_created',
    description: 'after registration for an olympiad or test is accepted',
    fields: event,
  },
  {
    event_type: 'olympiad_results',
    description: 'scores, place or diploma of an olympiad or test are available',
    fields: event,
  },
  {
    event_type: 'contest_work_submitted',
    description: 'after a work for a creative contest is uploaded or accepted',
    fields: contest,
  },
  {
    event_type: 'contest_results',
    description: 'contest results are final and a result/diploma is available',
    fields: contest,
  },
  { event_type: 'seminar_registration_created', description: 'after registration for a seminar', fields: event },
  { event_type: 'seminar_certificate_ready', description: 'seminar certificate produced', fields: event },
  { event_type: 'conference_registration_created', description: 'after registration for a conference', fields: event },
  { event_type: 'conference_certificate_ready', description: 'conference certificate produced', fields: event },
  {
    event_type: 'webinar_registration_created',
    description: 'after registration for a webinar or master class',
    fields: event,
  },
  { event_type: 'webinar_certificate_ready', description: 'webinar/master-class certificate produced', fields: event },
  {
    event_type: 'publication_site_submitted',
    description: 'after material for publication on the site is submitted',
    fields: publication,
  },
  {
    event_type: 'publication_site_published',
    description: 'publication placed on the site or certificate ready',
    fields: publication,
  },
  {
    event_type: 'publication_book_submitted',
    description: 'after material for a collection/book is submitted',
    fields: publication,
  },
  {
    event_type: 'publication_book_published',
    description: 'collection/book published or documents ready',
    fields: publication,
  },
  {
    event_type: 'publication_journal_submitted',
    description: 'after material for a journal is submitted',
    fields: publication,
  },
  {
    event_type: 'publication_journal_published',
    description: 'journal published or documents ready',
    fields: publication,
  },
];

/** Event types keys may allow beyond the catalog; they require event_type and email only (SPEC §3). */
export const EXTRA_EVENT_TYPES: readonly string[] = [
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
  'contest_work_accepted',
  'form_lead_collective_notify',
];

export const CART_TYPES = ['course', 'diploma', 'portal'] as const;
export type CartType = (typeof CART_TYPES)[number];

export function isCartType(t: string): t is CartType {
  return (CART_TYPES as readonly string[]).includes(t);
}

export const PERMISSIONS = ['transactional_send', 'cart_events_write', 'list_contacts_write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

/** Template keys the document shows in allowed_template_keys (offered by the admin UI). */
export const KNOWN_TEMPLATE_KEYS: readonly string[] = [
  'course_application_created',
  'course_payment_success',
  'course_test_passed',
  'course_test_failed',
  'course_completed_passed_document_ready',
  'course_completed_test_not_passed',
  'course_track_number',
  'portal_payment_success',
  'portal_olympiad_results',
  'portal_contest_work_accepted',
  'portal_contest_results',
  'portal_publication_status',
  'form_lead_collective_notify',
];

export const CART_STEPS = [
  { step: '1h', delayMinutes: 60 },
  { step: '1d', delayMinutes: 1440 },
  { step: '3d', delayMinutes: 4320 },
] as const;

export function cartStepKey(cartType: string, step: string): string {
  return `${cartType}_abandoned_cart_${step}`;
}

const catalogByType = new Map(CATALOG.map((e) => [e.event_type, e]));
const extraSet = new Set(EXTRA_EVENT_TYPES);

export function isKnownEventType(t: string): boolean {
  return catalogByType.has(t) || extraSet.has(t);
}

export function catalogEvent(t: string): CatalogEvent | undefined {
  return catalogByType.get(t);
}

/** What an order-created or a purchase must carry whatever its templates need. */
export const CART_REQUIRED = ['email', 'order_id', 'cart_type'];

/** Required names as the 422 body lists them: top level bare, members of fields prefixed. */
export function requiredFieldsFor(eventType: string): string[] {
  const ev = catalogByType.get(eventType);
  return ['event_type', 'email', ...(ev?.fields ?? []).map((f) => `fields.${f}`)];
}

/** Every key a project's routing may hold: catalog and extra event types, and cart-chain steps. */
export function isRoutingKey(key: string): boolean {
  if (isKnownEventType(key)) return true;
  return CART_TYPES.some((c) => CART_STEPS.some((s) => cartStepKey(c, s.step) === key));
}

export function allRoutingKeys(): string[] {
  return [
    ...CATALOG.map((e) => e.event_type),
    ...EXTRA_EVENT_TYPES,
    ...CART_TYPES.flatMap((c) => CART_STEPS.map((s) => cartStepKey(c, s.step))),
  ];
}

/**
 * The gateway endpoints as the event log names them (SPEC §5): the endpoint tells an order-created or a
 * purchase (logged as `course_order_created`, `course_paid`) from a transactional event of the same name.
 * `unpaid-order` is the legacy endpoint. `report` is no request of a site: an inbound bounce, complaint
 * or delivery report (SPEC §12), listed as an event of its own.
 */
export const EVENT_ENDPOINTS = [
  'catalog',
  'transactional',
  'order-created',
  'purchase',
  'list-contact',
  'unpaid-order',
  'report',
] as const;
