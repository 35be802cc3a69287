// The baseline of the accept-path bench: bare Fastify (same version, same body limit, no logger) with
// routes at the gateway's paths that parse the same JSON body and answer a response of the same shape,
// touching no database. Started as a child process exactly like the gateway.
import Fastify from 'fastify';

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
let n = 0;
app.get('/healthz', async () => ({ ok: true }));
app.post('/api/scoped/send/transactional', async (req) => {
  const b = req.body as Record<string, unknown>;
  n++;
  return {
    ok: true,
    site_key: 'demo-courses',
    event_type: b.event_type,
    email: b.email,
    event_id: n,
    scheduled_email_id: n,
    sent: 0,
    failed: 0,
    status: 'queued',
  };
});
app.post('/api/scoped/events/order-created', async (req) => {
  const b = req.body as Record<string, unknown>;
  n++;
  return {
    ok: true,
    site_key: 'demo-courses',
    event_id: n,
    order_id: b.order_id,
    cart_type: b.cart_type,
    scheduled_email_ids: [n, n + 1, n + 2],
    duplicate: false,
  };
});
// The tracking bench's baseline: a redirect and nothing else (no token check, no recording).
app.get('/c/*', async (_req, reply) => reply.redirect('https://site.example/course?id=1#pay', 302));
await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
const stop = () => void app.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
