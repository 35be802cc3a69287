// The legacy unpaid-order endpoint (SPEC §6): order-created for a course, with the project named in the
// body and the admin token instead of a key. An administrator's intake, so it is audited (SPEC §14).
import { canonicalAddress } from '../domain/email.js';
import type { OrderCreatedBody, OrderCreatedResponse } from '../schemas/gateway.js';
import { requireProject } from './admin.js';
import { record, type AuditActor } from './audit.js';
import type { Deps, GatewayCall } from './context.js';
import { createOrder } from './gateway.js';

/** The legacy unpaid-order endpoint: order-created for a course, with the project named in the body. */
export async function unpaidOrder(
  deps: Deps,
  who: AuditActor,
  input: Omit<OrderCreatedBody, 'cart_type'> & { site_key: string },
): Promise<OrderCreatedResponse> {
  const project = await requireProject(deps.db.db, input.site_key);
  const { site_key: _site, ...rest } = input;
  const call: GatewayCall = {
    deps,
    project,
    key: null,
    endpoint: 'unpaid-order',
    // An administrator's intake: its audit row is written in the accept path's own transaction (the
    // event, the order, its e-mails and the row commit together).
    alsoInTransaction: (trx, o) => {
      const r = o.body as OrderCreatedResponse;
      return record(
        trx,
        who,
        {
          action: 'event.unpaid_order',
          site_key: project.site_key,
          target: `event:${o.eventId}`,
          after: {
            event_id: o.eventId,
            order_id: r.order_id,
            cart_type: r.cart_type,
            email: canonicalAddress(input.email),
            scheduled_email_ids: r.scheduled_email_ids,
            duplicate: r.duplicate,
            replayed_stored_answer: o.replayed,
          },
        },
        deps.clock.now(),
      );
    },
  };
  const r = await createOrder(call, { ...rest, cart_type: 'course' });
  return r.body;
}
