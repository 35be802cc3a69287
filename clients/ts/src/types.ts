// Request and answer types of the gateway calls, taken from the generated OpenAPI types (openapi.ts), so
// they follow the gateway's /openapi.json without being written twice.
import type { paths } from './openapi.js';

type JsonBody<P extends keyof paths> = paths[P]['post'] extends {
  requestBody: { content: { 'application/json': infer B } };
}
  ? B
  : never;
type JsonAnswer<P extends keyof paths, M extends 'get' | 'post'> = paths[P][M] extends {
  responses: { 200: { content: { 'application/json': infer R } } };
}
  ? R
  : never;
type Query<P extends keyof paths> = paths[P]['get'] extends { parameters: { query?: infer Q } }
  ? NonNullable<Q>
  : never;

export type CatalogResponse = JsonAnswer<'/api/scoped/events/catalog', 'get'>;
export type TransactionalRequest = JsonBody<'/api/scoped/send/transactional'>;
export type TransactionalResponse = JsonAnswer<'/api/scoped/send/transactional', 'post'>;
export type OrderCreatedRequest = JsonBody<'/api/scoped/events/order-created'>;
export type OrderCreatedResponse = JsonAnswer<'/api/scoped/events/order-created', 'post'>;
export type PurchaseRequest = JsonBody<'/api/scoped/events/purchase'>;
export type PurchaseResponse = JsonAnswer<'/api/scoped/events/purchase', 'post'>;
export type ListContactRequest = JsonBody<'/api/scoped/lists/{list_id}/contacts'>;
export type ListContactResponse = JsonAnswer<'/api/scoped/lists/{list_id}/contacts', 'post'>;
/** One topic's consent given or withdrawn (SPEC §18): also accepted as `consent: [...]` in the event bodies. */
export type ConsentRequest = JsonBody<'/api/scoped/contacts/consent'>;
export type ConsentResponse = JsonAnswer<'/api/scoped/contacts/consent', 'post'>;
/** A consent item of an event body. */
export type ConsentItem = NonNullable<TransactionalRequest['consent']>[number];
export type EraseResponse = JsonAnswer<'/api/scoped/contacts/erase', 'post'>;

/** One line of `plan`: an e-mail the request scheduled, cancelled or did not schedule, and why. */
export type PlanItem = TransactionalResponse['plan'][number];
/** Why an e-mail will not go: `no_template`, `contact_unsubscribed`, `cancelled_by_purchase`, … */
export type EmailReason = NonNullable<PlanItem['reason']>;

export type EmailResponse = JsonAnswer<'/api/scoped/emails/{scheduled_email_id}', 'get'>;
/** One of the project's e-mails as a site may see it: status, attempts, why it will not go (never its body). */
export type ScopedEmail = EmailResponse['email'];
export type EmailsQuery = Query<'/api/scoped/emails'>;
export type EmailsResponse = JsonAnswer<'/api/scoped/emails', 'get'>;
export type EventsQuery = Query<'/api/scoped/events'>;
export type EventsResponse = JsonAnswer<'/api/scoped/events', 'get'>;
/** One row of the project's chronology: a request the gateway accepted or refused, and what it did. */
export type ScopedEvent = EventsResponse['items'][number];

/** An answer to a call made with `dryRun: true`: what would happen; nothing was written or sent. */
export type DryRun<T> = T & { dry_run: true };
