// @ts-check
// Shapes of the admin API answers the UI reads, for JSDoc (`import('./types.js').X`); no code. Written
// here rather than imported from the server's schemas (src/schemas), whose modules need Node's types;
// the error envelope comes from the generated client types, which need nothing. Of a long answer the UI
// reads little of (a template), only the members it reads are named.

/** @typedef {'ok' | 'bad' | 'warn' | 'info' | 'muted'} Tone A badge's colour (the stylesheet's classes). */

/**
 * An error answer's `detail.error` (the generated client's type), with the case-specific members the UI
 * reads: a 422's fields, and the part and line of a template that does not parse.
 * @typedef {import('../../../../clients/ts/src/openapi').components['schemas']['ErrorEnvelope']['detail']['error']
 *   & { missing_fields?: string[], invalid_fields?: Record<string, string>,
 *   template_problem?: { part: string, line: number, message: string } }} ErrorBody
 */

/**
 * A page of a cursor-paged list.
 * @template T
 * @typedef {{ ok: true, items: T[], next_cursor: string | null }} Page
 */

/**
 * A list the API returns whole.
 * @template T
 * @typedef {{ ok: true, items: T[] }} Items
 */

/**
 * How the router moves (app.js `navigate`): `replace` the history entry instead of adding one, the
 * entry's `state`, and what gets the focus once the page is drawn (a selector; default: its heading).
 * @typedef {{ replace?: boolean, state?: unknown, keepFocus?: boolean, focus?: string | null }} NavigateOptions
 */

/**
 * What the router gives a page (app.js).
 * @typedef {object} PageContext
 * @property {string[]} params the route's path segments, decoded
 * @property {URLSearchParams} query
 * @property {{ stack?: string[] }} state the history entry's state (paging.js keeps earlier cursors there)
 * @property {(url: string, options?: NavigateOptions) => void} navigate draws the page at url; a page
 *   does not wait for it (the router shows a failure on the page it draws)
 * @property {(session: Session) => void} loggedIn
 * @property {Session | null} session
 * @property {(fn: () => void) => void} onLeave called when the user leaves the page (timers stop there)
 * @property {() => boolean} isCurrent false once the user has moved on to another page
 */

/** @typedef {'owner' | 'project_admin' | 'viewer'} Role */

/**
 * Who is logged in (`id` null: the root ADMIN_TOKEN; `projects` null: every project).
 * @typedef {{ id: number | null, email: string | null, name: string, role: Role,
 *   projects: string[] | null, read_only: boolean }} Account
 */

/**
 * A login session as POST and GET /api/admin/session answer it.
 * @typedef {{ ok: true, csrf_token: string, expires_at: string, idle_timeout_seconds: number,
 *   account: Account }} Session
 */

/**
 * GET /api/admin/ui/meta: the catalog and the vocabularies.
 * @typedef {object} UiMeta
 * @property {{ event_type: string, description: string, fields: string[] }[]} catalog
 * @property {string[]} extra_event_types
 * @property {string[]} cart_types
 * @property {{ step: string, delay_minutes: number }[]} cart_steps
 * @property {string[]} permissions
 * @property {string[]} known_template_keys
 * @property {string[]} routing_keys
 * @property {string[]} endpoints
 * @property {string[]} contact_statuses
 * @property {string[]} email_statuses
 * @property {string[]} webhook_providers
 * @property {string[]} webhook_kinds
 * @property {string[]} audit_actions
 * @property {Role[]} roles
 * @property {Record<string, Tone>} status_tones
 * @property {string} public_url
 * @property {string | null} bounce_domain
 * @property {boolean} tracking_active PUBLIC_URL is set: opens and clicks can be tracked
 * @property {string[]} consent_by_default topics a new project requires consent for (the offer's topics)
 */

/**
 * A project (GET /api/admin/projects).
 * @typedef {object} Project
 * @property {number} id
 * @property {string} site_key
 * @property {string} name
 * @property {string} from_email
 * @property {string} timezone
 * @property {string} locale
 * @property {string | null} brand_color
 * @property {string} created_at
 * @property {string} updated_at
 * @property {string | null} marketing_paused_at campaigns and cart chains paused since; null: running
 * @property {string | null} marketing_paused_reason
 * @property {boolean} allow_private_webhooks
 * @property {string | null} reply_to
 * @property {string} fallback_name
 * @property {string | null} default_layout
 * @property {{ opens: boolean, clicks: boolean, transactional_opens: boolean }} tracking
 * @property {{ source?: string, medium?: string, campaign?: string } | null} utm
 */

/**
 * An API key's rights (SPEC §2).
 * @typedef {object} KeyRights
 * @property {string[]} [permissions]
 * @property {string[]} [allowed_api_events]
 * @property {string[]} [allowed_template_keys]
 * @property {string[]} [allowed_cart_types]
 * @property {number} [list_id]
 * @property {string} [note]
 */

/** @typedef {{ per_second: number, burst: number }} RateLimit */

/**
 * An API key of a project.
 * @typedef {{ id: number, site_key: string, name: string, status: 'active' | 'disabled', last4: string,
 *   rights: KeyRights, rate_limit: RateLimit | null, created_at: string, disabled_at: string | null }} ApiKey
 */

/**
 * The answer that created a key: the full key, shown only there.
 * @typedef {ApiKey & { key: string }} CreatedKey
 */

/** @typedef {{ list_id: number, name: string, members: number, created_at: string }} AddressBook */

/**
 * A template of a project as its list shows it (the members a contract check reads).
 * @typedef {{ name: string, subject: string, variables: { name: string, required: boolean }[],
 *   unchecked: boolean }} TemplateSummary
 */

/** Routing key (event type or cart step) -> template name. @typedef {Record<string, string>} Routes */

/**
 * GET /api/admin/projects/{site_key}/checklist.
 * @typedef {'project' | 'template' | 'routing' | 'key' | 'delivery' | 'test_email'} ChecklistStep
 * @typedef {{ step: ChecklistStep, done: boolean, count: number }} ChecklistItem
 * @typedef {{ ok: true, site_key: string, complete: boolean, steps: ChecklistItem[] }} Checklist
 */

/**
 * A starting template of GET /api/admin/ui/template-gallery.
 * @typedef {{ routing_key: string, name: string, subject: string, html: string, text: string,
 *   tracking: boolean }} GalleryTemplate
 */

/**
 * An administrator account (GET /api/admin/users).
 * @typedef {{ id: number, email: string, name: string, role: Role, status: 'active' | 'disabled',
 *   projects: string[], created_at: string, updated_at: string }} User
 */

/**
 * A personal token (GET /api/admin/tokens).
 * @typedef {{ id: number, name: string, last4: string, read_only: boolean,
 *   status: 'active' | 'revoked' | 'expired', expires_at: string | null, created_at: string,
 *   last_used_at: string | null }} PersonalToken
 */

/**
 * The answer that created a token: the token, shown only there.
 * @typedef {PersonalToken & { token: string }} CreatedToken
 */

/**
 * One of the account's login sessions (GET /api/admin/sessions).
 * @typedef {{ id: string, current: boolean, created_at: string, last_seen: string,
 *   expires_at: string }} LoginSession
 */

/**
 * An entry of the audit log.
 * @typedef {{ id: number, at: string, actor: string, via: string, token: { id: number, name: string } | null,
 *   address: string | null, action: string, site_key: string | null, target: string | null,
 *   before: unknown, after: unknown }} AuditEntry
 */

/**
 * GET /api/admin/dashboard: the figures of the window `since`..`until` (UTC days).
 * @typedef {{ sent: number, delivered: number, bounced: number, soft_bounced: number, complained: number,
 *   failed: number, suppressed: number, cancelled: number, pending: number }} EmailOutcomes
 * @typedef {{ day: string, accepted: number, rejected: number, repeated: number,
 *   by_type: Record<string, number> }} EventDay by_type: keyed as events_by_type's `key`
 * @typedef {{ key: string, endpoint: string, event_type: string, accepted: number, rejected: number,
 *   repeated: number, total: number }} EventTypeRow
 * @typedef {{ sent: number, bounced: number, complained: number, bounce_rate: number, complaint_rate: number,
 *   level: 'ok' | 'warning' | 'stop' }} RateWindow
 * @typedef {{ site_key: string, marketing_paused_at: string | null, marketing_paused_reason: string | null,
 *   days7: RateWindow, days30: RateWindow }} ProjectRates
 * @typedef {object} Carts
 * @property {number} orders_created
 * @property {number} orders_paid
 * @property {number} paid_after_cart_email
 * @property {{ day: string, created: number, paid: number, recovered: number }[]} by_day
 * @property {{ cart_type: string, created: number, paid: number, recovered: number }[]} by_cart_type
 * @property {{ currency: string, paid: number, recovered: number }[]} amounts
 * @typedef {object} Dashboard
 * @property {string | null} site_key
 * @property {string} since
 * @property {string} until
 * @property {EventDay[]} events_by_day
 * @property {EventTypeRow[]} events_by_type
 * @property {({ day: string } & EmailOutcomes)[]} emails_by_day
 * @property {EmailOutcomes} emails_by_outcome
 * @property {{ sent: number, delivered: number, opened: number, clicked: number }} emails_sent
 * @property {{ site_key: string, total: number, by_code: Record<string, number> }[]} key_refusals
 * @property {{ scheduled: number, queued: number, sending: number, over_quota: number,
 *   oldest_due_at: string | null, oldest_due_age_seconds: number | null }} outbox
 * @property {Carts} carts
 * @property {{ cart_type: string, step: string, sent: number, delivered: number, opened: number,
 *   clicked: number, purchased_after_click: number, recovered_by_currency: Record<string, number> }[]} cart_steps
 * @property {Record<string, number>} paid_amount_by_currency
 * @property {ProjectRates[]} deliverability
 */

export {};
