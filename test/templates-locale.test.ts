// Templates that speak Russian (SPEC §15): a project's time zone and locale through the admin API, the
// date/plural/money filters, and the same output in the preview and in an e-mail that went through a
// real SMTP server (smtp-server, read back with mailparser), on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { renderMessage, type RenderSettings } from '../src/delivery/render.js';
import { createSmtpTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { PUBLIC_URL, SECRET, startSmtp, type TestSmtp } from './fixtures/delivery-support.js';
import {
  adminCall,
  createTestApp,
  DIALECTS,
  keyCall,
  newKey,
  withoutDefaultLayout,
  type TestApp,
} from './support/harness.js';
import { bodyOf } from './support/document.js';

const NBSP = '\u00a0';
const RU: RenderSettings = { locale: 'ru', timezone: 'Europe/Moscow' };
const EN: RenderSettings = { locale: 'en', timezone: 'Europe/Moscow' };
const one = (source: string, ctx: Record<string, unknown> = {}, s: RenderSettings = RU) =>
  renderMessage({ subject: source, html: source, text: source }, ctx, s).text;

describe('date filter', () => {
  const d = '2026-11-20T09:30:00Z';
  it('"%-d %B %Y" gives the genitive month in Russian and English month names in en', () => {
    assert.equal(one('{{ d | date: "%-d %B %Y" }}', { d }), '20 ноября 2026');
    assert.equal(one('{{ d | date: "%-d %B %Y" }}', { d }, EN), '20 November 2026');
    assert.equal(one('{{ d | date: "%d %b %Y" }}', { d }), '20 нояб. 2026');
    assert.equal(one('{{ d | date: "%-d %^B" }}', { d }), '20 НОЯБРЯ');
  });

  it('without a day the month stands in the nominative; %OB asks for it explicitly', () => {
    assert.equal(one('{{ d | date: "%B %Y" }}', { d }), 'ноябрь 2026');
    assert.equal(one('{{ d | date: "%-d %OB" }}', { d }), '20 ноябрь');
    assert.equal(one('{{ d | date: "%%d %B" }}', { d }), '%d ноябрь', 'an escaped %%d is no day');
  });

  it("formats in the project's time zone, across midnight and DST; a third argument names another zone", () => {
    const late = '2026-11-20T22:30:00Z';
    assert.equal(one('{{ d | date: "%-d %B %H:%M" }}', { d: late }), '21 ноября 01:30');
    assert.equal(
      one('{{ d | date: "%-d %B %H:%M" }}', { d: late }, { locale: 'ru', timezone: 'America/New_York' }),
      '20 ноября 17:30',
    );
    // New York is on summer time in July: UTC-4, not -5.
    assert.equal(
      one('{{ d | date: "%H:%M %z" }}', { d: '2026-07-01T12:00:00Z' }, { locale: 'en', timezone: 'America/New_York' }),
      '08:00 -0400',
    );
    assert.equal(one('{{ d | date: "%H:%M", "Asia/Yekaterinburg" }}', { d: late }), '03:30');
    assert.equal(one('{{ d | date: "%H:%M" }}', { d: '2026-11-20T12:00:00+03:00' }), '12:00');
  });

  it("keeps liquid's semantics otherwise: Unix seconds, a weekday, a value that is no date comes back", () => {
    assert.equal(one('{{ 0 | date: "%Y-%m-%d %H:%M" }}'), '1970-01-01 03:00');
    assert.equal(one('{{ d | date: "%A, %-d %B" }}', { d }), 'пятница, 20 ноября');
    assert.equal(one('{{ d | date: "%A, %-d %B" }}', { d }, EN), 'Friday, 20 November');
    assert.equal(one('{{ "soon" | date: "%-d %B" }}'), 'soon');
    assert.equal(one('{{ d | date }}', { d }), '20 ноября 2026, 12:30');
    assert.match(one('{{ d | date }}', { d }, EN), /^Friday, November 20, 2026 at 12:30 pm/);
  });
});

describe('plural filter', () => {
  const ru = (n: unknown) => one('{{ n | plural: "курс", "курса", "курсов" }}', { n });
  const en = (n: unknown) => one('{{ n | plural: "course", "courses" }}', { n }, EN);
  it('Russian rules: one, few, many; fractions take the second form', () => {
    const cases: [unknown, string][] = [
      [0, 'курсов'],
      [1, 'курс'],
      [2, 'курса'],
      [3, 'курса'],
      [4, 'курса'],
      [5, 'курсов'],
      [11, 'курсов'],
      [12, 'курсов'],
      [14, 'курсов'],
      [21, 'курс'],
      [22, 'курса'],
      [25, 'курсов'],
      [101, 'курс'],
      [111, 'курсов'],
      [1.5, 'курса'],
      ['3', 'курса'],
      [-1, 'курс'],
    ];
    for (const [n, want] of cases) assert.equal(ru(n), want, `n = ${String(n)}`);
    assert.equal(one('{{ 3 | plural: "курс", "курса", "курсов" }}'), 'курса');
  });
  it('English takes two forms; a value that is no number takes the form of 0', () => {
    assert.deepEqual([0, 1, 2, 21, 1.5].map(en), ['courses', 'course', 'courses', 'courses', 'courses']);
    assert.equal(ru('many'), 'курсов');
    assert.equal(one('{{ 5 | plural: "курс", "курса" }}'), 'курса', 'a missing third form falls back to the last');
    assert.equal(one('{{ 5 | plural }}'), '');
  });
});

describe('money filter', () => {
  it('formats as Intl.NumberFormat does for the locale and currency, with no-break spaces in ru', () => {
    assert.equal(one('{{ 2500 | money: "RUB" }}'), `2${NBSP}500,00${NBSP}₽`);
    assert.equal(
      one('{{ 2500 | money: "RUB" }}'),
      new Intl.NumberFormat('ru', { style: 'currency', currency: 'RUB' }).format(2500),
    );
    assert.equal(one('{{ 2500 | money: "RUB" }}', {}, EN), `RUB${NBSP}2,500.00`);
    assert.equal(one('{{ a | money: c }}', { a: 1234.5, c: 'usd' }, EN), '$1,234.50');
    assert.equal(one('{{ a | money: c }}', { a: '2500,50', c: 'KZT' }), `2${NBSP}500,50${NBSP}KZT`);
  });
  it('decimal strings as PHP sends them; no currency; a bad currency or amount', () => {
    assert.equal(one('{{ "2500.00" | money: "RUB" }}'), `2${NBSP}500,00${NBSP}₽`);
    assert.equal(one('{{ 2500 | money }}'), `2${NBSP}500,00`);
    assert.equal(one('{{ 2500 | money: "рубли" }}'), `2${NBSP}500,00 рубли`);
    assert.equal(one('{{ "free" | money: "RUB" }}'), 'free');
  });
  it('in the HTML part the output is escaped like any other value', () => {
    const out = renderMessage({ subject: '', html: '<b>{{ a | money: "<x>" }}</b>', text: '' }, { a: 1 }, RU);
    assert.equal(out.html, `<b>1,00 &lt;x&gt;</b>`);
  });
});

const TEMPLATE = {
  subject: '{{ name }}, оплата {{ amount | money: currency }} от {{ paid_at | date: "%-d %B %Y" }}',
  html: '<p>{{ n }} {{ n | plural: "курс", "курса", "курсов" }} до {{ paid_at | date: "%-d %B %Y, %H:%M" }}</p>',
  text: '{{ n }} {{ n | plural: "курс", "курса", "курсов" }}: {{ amount | money: currency }}',
};

for (const d of DIALECTS) {
  describe(`project time zone and locale [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    before(async () => {
      t = await createTestApp(d.name);
    });
    after(async () => t?.close());

    const project = async (site: string) =>
      (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
        (p: { site_key: string }) => p.site_key === site,
      );

    it('a new project is Europe/Moscow and ru; POST /api/sites sets both and keeps them when absent', async () => {
      const r = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 's1',
        name: 'S1',
        from_email: 'a@s1.example',
      });
      assert.equal(r.status, 200);
      assert.equal(r.body.timezone, 'Europe/Moscow');
      assert.equal(r.body.locale, 'ru');
      assert.equal((await project('s1')).timezone, 'Europe/Moscow');

      const set = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 's1',
        name: 'S1',
        from_email: 'a@s1.example',
        timezone: 'asia/yekaterinburg',
        locale: 'en',
      });
      assert.equal(set.status, 200, JSON.stringify(set.body));
      assert.equal(set.body.timezone, 'Asia/Yekaterinburg', 'stored in its canonical spelling');
      assert.equal(set.body.locale, 'en');
      const again = await adminCall(t.app, 'POST', '/api/sites', {
        site_key: 's1',
        name: 'S1 renamed',
        from_email: 'a@s1.example',
      });
      assert.equal(again.body.timezone, 'Asia/Yekaterinburg');
      const p = await project('s1');
      assert.deepEqual([p.name, p.timezone, p.locale], ['S1 renamed', 'Asia/Yekaterinburg', 'en']);
    });

    it('an unknown time zone or locale is a 422 naming the member and changes nothing', async () => {
      const base = { site_key: 's1', name: 'S1', from_email: 'a@s1.example' };
      for (const [body, member] of [
        [{ ...base, timezone: 'Mars/Olympus_Mons' }, 'timezone'],
        [{ ...base, timezone: '+03:00' }, 'timezone'],
        [{ ...base, timezone: 'Europe/Moscow\u0000' }, 'timezone'],
        [{ ...base, timezone: 'x'.repeat(65) }, 'timezone'],
        [{ ...base, locale: 'de' }, 'locale'],
        [{ ...base, locale: 'RU' }, 'locale'],
        [{ ...base, timezone: 3 }, 'timezone'],
      ] as const) {
        const r = await adminCall(t.app, 'POST', '/api/sites', body);
        assert.equal(r.status, 422, JSON.stringify(body));
        assert.equal(r.body.detail.error.code, 'validation_error');
        assert.ok(Object.keys(r.body.detail.error.invalid_fields ?? {}).includes(member), JSON.stringify(r.body));
      }
      const fresh = await adminCall(t.app, 'POST', '/api/sites', {
        ...base,
        site_key: 's-bad',
        timezone: 'Nowhere/City',
      });
      assert.equal(fresh.status, 422);
      assert.equal(await project('s-bad'), undefined, 'no project was created');
      const p = await project('s1');
      assert.deepEqual([p.timezone, p.locale], ['Asia/Yekaterinburg', 'en']);
    });

    it('PATCH /api/admin/projects/{site_key} changes what it names; 404, 422 and 401 as for every admin route', async () => {
      const r = await adminCall(t.app, 'PATCH', '/api/admin/projects/s1', {
        locale: 'ru',
        timezone: 'Europe/Kaliningrad',
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.project.locale, 'ru');
      assert.equal(r.body.project.timezone, 'Europe/Kaliningrad');
      assert.equal(r.body.project.name, 'S1 renamed', 'absent members stay');
      const same = await adminCall(t.app, 'PATCH', '/api/admin/projects/s1', {});
      assert.equal(same.status, 200);
      assert.equal(same.body.project.timezone, 'Europe/Kaliningrad');
      const renamed = await adminCall(t.app, 'PATCH', '/api/admin/projects/s1', {
        name: 'Школа',
        from_email: 'b@s1.example',
      });
      assert.deepEqual([renamed.body.project.name, renamed.body.project.from_email], ['Школа', 'b@s1.example']);

      assert.equal((await adminCall(t.app, 'PATCH', '/api/admin/projects/nope', { locale: 'en' })).status, 404);
      const bad = await adminCall(t.app, 'PATCH', '/api/admin/projects/s1', { timezone: 'Europe/Atlantis' });
      assert.equal(bad.status, 422);
      assert.ok('timezone' in bad.body.detail.error.invalid_fields);
      const extra = await adminCall(t.app, 'PATCH', '/api/admin/projects/s1', { site_key: 'other' });
      assert.equal(extra.status, 422);
      const anon = await t.app.inject({ method: 'PATCH', url: '/api/admin/projects/s1', payload: { locale: 'en' } });
      assert.equal(anon.statusCode, 401);
      assert.equal((await project('s1')).timezone, 'Europe/Kaliningrad');
    });

    it("the preview renders in the project's locale and time zone, and follows a change", async () => {
      await adminCall(t.app, 'POST', '/api/sites', { site_key: 'p1', name: 'P1', from_email: 'a@p1.example' });
      await withoutDefaultLayout(t.app, 'p1');
      const preview = () =>
        adminCall(t.app, 'POST', '/api/admin/templates/preview', {
          site_key: 'p1',
          ...TEMPLATE,
          sample: { name: 'Анна', amount: 2500, currency: 'RUB', n: 3, paid_at: '2026-11-20T21:30:00Z' },
        });
      const ru = await preview();
      assert.equal(ru.status, 200, JSON.stringify(ru.body));
      assert.equal(ru.body.subject, `Анна, оплата 2${NBSP}500,00${NBSP}₽ от 21 ноября 2026`);
      assert.equal(bodyOf(ru.body.html), '<p>3 курса до 21 ноября 2026, 00:30</p>');
      await adminCall(t.app, 'PATCH', '/api/admin/projects/p1', { locale: 'en', timezone: 'UTC' });
      const en = await preview();
      assert.equal(en.body.subject, `Анна, оплата RUB${NBSP}2,500.00 от 20 November 2026`);
      assert.equal(bodyOf(en.body.html), '<p>3 курса до 20 November 2026, 21:30</p>', 'en takes the first two forms');
    });

    it('the worker sends what the preview shows: through a real SMTP server, read back with mailparser', async () => {
      const smtp: TestSmtp = await startSmtp();
      const smtpTransport = createSmtpTransport(smtp.url, { maxConnections: 1, timeoutMs: 5000 });
      const worker = createWorker({
        db: t.deps.db,
        transport: smtpTransport,
        clock: t.clock,
        publicUrl: PUBLIC_URL,
        secret: SECRET,
      });
      try {
        const site = 'w1';
        await adminCall(t.app, 'POST', '/api/sites', {
          site_key: site,
          name: 'Педсовет',
          from_email: 'noreply@w1.example',
        });
        await withoutDefaultLayout(t.app, site);
        await adminCall(t.app, 'POST', '/api/templates', { site_key: site, name: 'paid_ru', ...TEMPLATE });
        await adminCall(t.app, 'PUT', `/api/admin/projects/${site}/routing`, { routes: { course_paid: 'paid_ru' } });
        const { key } = await newKey(t.app, site, {
          permissions: ['transactional_send'],
          allowed_api_events: ['course_paid'],
        });
        const r = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
          event_type: 'course_paid',
          email: 'anna@w1.example',
          name: 'Анна Петрова',
          amount: 2500,
          currency: 'RUB',
          fields: { n: 3, paid_at: '2026-11-20T09:30:00+00:00' },
        });
        assert.equal(r.status, 200, JSON.stringify(r.body));
        assert.equal(await worker.runOnce(), 1);
        await smtp.waitForReceived(1);
        const mail = smtp.accepted[0];
        assert.equal(mail.subject, `Анна Петрова, оплата 2${NBSP}500,00${NBSP}₽ от 20 ноября 2026`);
        assert.equal(bodyOf(mail.html as string), '<p>3 курса до 20 ноября 2026, 12:30</p>');
        assert.equal(mail.text?.trim(), `3 курса: 2${NBSP}500,00${NBSP}₽`);
      } finally {
        await worker.stop();
        await smtpTransport.close();
        await smtp.close();
      }
    });
  });
}
