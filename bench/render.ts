// Render bench (issue 38 items 1 and 5): CPU per rendered e-mail of the demo project's contest_results
// template in its layout, with and without the render plan, inline on this thread and through the render
// pool's threads (which SPEC §20 requires for delivery). The pool's cost over inline is what handing a
// render to a thread costs (structured clone of the input both ways, the message, the budget timer):
// the figure that says whether moving rendering off the event loop costs more than it saves.
// CPU is the whole process's (process.cpuUsage counts every thread), so load on the machine matters less
// than for wall-clock rates.
//   npx tsx bench/render.ts    (BENCH_RENDERS=n, default 2,000; 500 with BENCH_QUICK=1)
import { DEMO_LAYOUT, DEMO_TEMPLATES, demoHtml, demoText } from '../src/services/demoTemplates.js';
import { buildContext, renderEmail, type EmailInput } from '../src/delivery/render.js';
import { renderInPool, warmRenderPool, configureRenderPool } from '../src/delivery/renderPool.js';
import { applyTracking } from '../src/delivery/tracking.js';
import { log, QUICK, summary } from './lib.js';

const N = Number(process.env.BENCH_RENDERS) || (QUICK ? 500 : 2000);
/** Renders in flight at once through the pool, as a worker's claimed batch has. */
const IN_FLIGHT = 32;

const [, spec] = DEMO_TEMPLATES.contest_results;
const template = { subject: spec.subject, html: demoHtml(spec), text: demoText(spec), compiled_html: null };
// One object for every e-mail, as deliver.ts passes a claimed batch's e-mails of one template and layout.
const layout = { html: DEMO_LAYOUT.html, text: DEMO_LAYOUT.text };

function input(i: number, plan: boolean): EmailInput {
  const context = buildContext({
    request: {
      event_type: 'contest_results',
      fields: { event_title: 'Spring contest', work_title: 'A study of autumn leaves', place: String(i % 3) },
      event_title: 'Spring contest',
      order_id: `A-${i}`,
    },
    contact: { email: `reader${i}@example.com`, name: `Reader ${i}` },
    project: { name: 'Courses', site_key: 'bench', logo_url: null, postal_address: null },
    replyAddress: 'noreply@courses.example',
    unsubscribeUrl: `https://gw.example/u/${i}`,
    preferencesUrl: `https://gw.example/p/${i}`,
  });
  return {
    template,
    layout,
    context,
    settings: { locale: 'ru', timezone: 'Europe/Moscow' },
    planKey: plan ? 'bench-contest/osnovnoy' : null,
  };
}

/** CPU microseconds (every thread of the process) per render. */
async function measure(run: (i: number) => unknown): Promise<number> {
  // Warm-up: JIT, the parse cache, the plan, the pool's threads.
  for (let i = 0; i < 100; i++) await run(i);
  const before = process.cpuUsage();
  let next = 0;
  const lane = async () => {
    while (next < N) await run(next++);
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, lane));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / N;
}

configureRenderPool({ budgetMs: 500, threads: 0 });
await warmRenderPool();
const results = {
  inline_no_plan_us: await measure((i) => renderEmail(input(i, false))),
  inline_plan_us: await measure((i) => renderEmail(input(i, true))),
  pool_no_plan_us: await measure((i) => renderInPool(1, input(i, false))),
  pool_plan_us: await measure((i) => renderInPool(1, input(i, true))),
};
// The click-tracking step (on the event loop, after rendering): every link and the pixel, per e-mail.
const parts = renderEmail(input(1, true));
const key = Buffer.alloc(32, 7);
const tracking_us = await measure((i) =>
  applyTracking(parts, {
    publicUrl: 'https://gw.example',
    key,
    emailId: i,
    projectId: 1,
    templateKey: 'portal_contest_results',
    sentAt: Date.now(),
    settings: { opens: true, clicks: true, utm: null },
  }),
);
const handOff = results.pool_plan_us - results.inline_plan_us;
log(
  `render (${N} e-mails, contest_results in the demo layout, CPU per e-mail, all threads):\n` +
    `  inline: ${results.inline_no_plan_us.toFixed(0)} us without plan, ${results.inline_plan_us.toFixed(0)} us with\n` +
    `  pool:   ${results.pool_no_plan_us.toFixed(0)} us without plan, ${results.pool_plan_us.toFixed(0)} us with\n` +
    `  hand-off to the pool: ${handOff.toFixed(0)} us per render; click tracking (links, pixel): ${tracking_us.toFixed(0)} us`,
);
log(summary('render', { renders: N, ...results, hand_off_us: handOff, tracking_us }));
process.exit(0);
