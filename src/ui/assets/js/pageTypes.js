// @ts-check
// Types the pages share, for their JSDoc `import(…)`s; no code. The admin API's answers are
// written out here from the server's schemas (src/schemas, named beside each type): those modules need
// Node's types, and the generated client (clients/ts) covers /api/scoped/* only. An answer may leave out
// members no page reads.

// Defined once in types.js (the shared modules' types), named here too for the pages that import this file.
/** @typedef {import('./types.js').PageContext} PageContext */
/** @typedef {import('./types.js').NavigateOptions} NavigateOptions */
/** @typedef {import('./types.js').UiMeta} UiMeta */
/** @typedef {import('./types.js').Project} Project */
/** @typedef {import('./types.js').AddressBook} AddressBook */
/**
 * @template T
 * @typedef {import('./types.js').Page<T>} Page
 */
/**
 * @template T
 * @typedef {import('./types.js').Items<T>} Items
 */

/** What h() and the cells of a table show: nodes, text, nothing, or a list of these. */
/** @typedef {Node | string | null | undefined | ContentList} Content */
/** @typedef {Content[]} ContentList */

/**
 * A column of dom.js's table(): its heading, and what each row shows in it.
 * @template R
 * @typedef {{ label: Content, cell: (row: R) => Content, class?: string }} Column
 */

/**
 * A tab of the project page (projects.js): drawn with the project and the vocabularies.
 * @typedef {(ctx: PageContext, p: Project, m: UiMeta) => Promise<HTMLElement>} ProjectTab
 */

/** Routing key (event type or cart step) -> template name (schemas/admin.ts RoutingResponse). */
/** @typedef {{ ok: true, site_key: string, routes: Record<string, string> }} Routing */

/** A member a template's source uses (schemas/templates.ts TemplateVariableSchema). */
/** @typedef {{ name: string, required: boolean }} TemplateVariable */

/**
 * A template of a project (schemas/admin.ts TemplateView), as its list gives it.
 * @typedef {object} Template
 * @property {number} id
 * @property {string} name
 * @property {string} subject
 * @property {string} html
 * @property {string} text
 * @property {'html' | 'mjml'} format
 * @property {string | null} layout
 * @property {number | null} version the published one
 * @property {TemplateVariable[]} variables
 * @property {boolean} unchecked saved before variables were analysed
 * @property {string} updated_at
 */

/**
 * What a template change would do to recent requests (schemas/templates.ts ImpactEntrySchema): the
 * `impact` of an answer, or of a 409 template_impact error.
 * @typedef {object} ImpactEntry
 * @property {string} event_type
 * @property {string} template_key
 * @property {string[]} newly_required
 * @property {number} requests_7d
 * @property {number} would_fail_7d
 */

/**
 * An e-mail's opens and clicks (schemas/chronology.ts Engagement): counts are people's, machines' apart.
 * @typedef {object} Engagement
 * @property {number} opens
 * @property {number} clicks
 * @property {number} machine_opens
 * @property {number} machine_clicks
 * @property {string | null} first_open_at
 * @property {string | null} first_click_at
 * @property {{ url: string, clicks: number }[]} links
 * @property {Hit[]} hits the latest, newest first
 */
/**
 * An open (the pixel) or a click (a tracked link); a machine's is marked with why it is thought one.
 * @typedef {{ at: string, kind: 'open' | 'click', url: string | null, machine: boolean,
 *   machine_reason: string | null, ua_category: string }} Hit
 */

/**
 * A template's source as the editor has it, which the analysis and the preview take.
 * @typedef {{ subject: string, html: string, text: string, format: string, layout?: string }} Source
 */

/**
 * A layout of the project (schemas/templates.ts LayoutViewSchema); `used_by`: the templates whose
 * published version uses it.
 * @typedef {{ name: string, html: string, text: string, used_by: string[], updated_at: string }} Layout
 */

/** An address book (schemas/admin.ts ListView). */
/**
 * An e-mail as the lists show it (schemas/chronology.ts EmailListItem).
 * @typedef {object} EmailListItem
 * @property {number} id
 * @property {string} site_key
 * @property {string} kind
 * @property {string} template_key
 * @property {string} to
 * @property {string | null} subject null until it is rendered
 * @property {string} status
 * @property {string} due_at
 * @property {string | null} sent_at
 * @property {string | null} order_id
 * @property {number | null} event_id
 * @property {number | null} campaign_id
 * @property {number} contact_id
 * @property {string | null} chain_step
 * @property {number} attempts
 * @property {string | null} waiting_since not sent yet: when it first could not go (waiting for the relay)
 * @property {string | null} last_error
 * @property {boolean} test a test send from the delivery settings
 * @property {string | null} reason why it will not go, named from last_error (issue 37)
 */

/**
 * A request to the gateway, as the chronology keeps it (schemas/chronology.ts EventView).
 * @typedef {object} EventView
 * @property {number} id
 * @property {string} site_key
 * @property {string} received_at
 * @property {string} endpoint
 * @property {string | null} event_type
 * @property {string | null} email
 * @property {string | null} order_id
 * @property {string | null} idempotency_key
 * @property {string | null} key_last4
 * @property {number} http_status
 * @property {boolean} accepted
 * @property {'accepted' | 'rejected' | 'repeated'} outcome
 * @property {number | null} repeat_of
 * @property {string | null} error_code
 * @property {boolean} replayable a replay can succeed once the configuration is fixed (domain/refusal.ts)
 * @property {Json} payload
 * @property {Record<string, Json>} effects what the request did, as the accept path recorded it
 */

/** A value that came as JSON. */
/** @typedef {string | number | boolean | null | JsonList | JsonObject} Json */
/** @typedef {Json[]} JsonList */
/** @typedef {{ [key: string]: Json }} JsonObject */

/**
 * GET /api/admin/contacts/{id} (schemas/adminUi.ts ContactDetail, consent members from schemas/consent.ts).
 * @typedef {object} ContactDetail
 * @property {Contact} contact
 * @property {{ list_id: number, name: string, added_at: string }[]} lists
 * @property {EventView[]} events
 * @property {boolean} events_more
 * @property {EmailListItem[]} emails
 * @property {boolean} emails_more
 * @property {Subscription[]} topics
 * @property {ConsentRecord[]} consent newest first
 * @property {Erasure | null} erasure
 */

/**
 * A contact as a search lists it (schemas/adminUi.ts ContactItem).
 * @typedef {object} ContactItem
 * @property {number} id
 * @property {string} site_key
 * @property {string} email
 * @property {string | null} name
 * @property {string} status
 * @property {string} created_at
 * @property {string} updated_at
 */
/**
 * A contact with its fields and what set its status last (null when it never changed).
 * @typedef {ContactItem & { fields: Record<string, unknown>, erased_at: string | null,
 *   status_cause: StatusCause | null }} Contact
 */

/** What set a contact's status last (SPEC §12). */
/** @typedef {{ reason: string, email_id: number | null, report_id: number | null, at: string | null }} StatusCause */

/** A contact's state for one topic. */
/**
 * @typedef {{ key: string, title: string, advertising: boolean, require_consent: boolean, subscribed: boolean,
 *   latest_grant: boolean | null }} Subscription
 */

/**
 * A consent record: given or withdrawn, where and when.
 * @typedef {{ id: number, topic: string, granted: boolean, at: string, source: string,
 *   text_version: string | null, ip: string | null }} ConsentRecord
 */

/**
 * A contact's erasure: the scoped API's answer (generated client) without what only that one carries.
 * @typedef {Omit<import('../../../../clients/ts/src/types').EraseResponse, 'site_key' | 'event_id'>} Erasure
 */

export {};
