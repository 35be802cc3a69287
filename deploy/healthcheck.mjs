// The container's health check: /healthz of the HTTP server this process's ROLE runs, the API on PORT
// (all, api) or a worker's health and metrics server on METRICS_PORT (worker, bounces). Exit 0 healthy.
const role = process.env.ROLE || 'all';
const port = role === 'worker' || role === 'bounces' ? process.env.METRICS_PORT : process.env.PORT || '3000';
fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(20_000) }).then(
  (res) => process.exit(res.ok ? 0 : 1),
  () => process.exit(1),
);
