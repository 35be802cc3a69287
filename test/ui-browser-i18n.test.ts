// The admin UI in Russian and English in a real browser (playwright-core driving Debian's chromium), over
// the Russian demo project with events and e-mails: a browser that asks for Russian gets every main page
// in Russian (no English text of the catalogue on them, dates and numbers as Intl writes them in ru), the
// language menu switches to English and the choice is remembered, a project's template language and
// time zone are set from its page. With UPDATE_SCREENSHOTS=1 the Russian pages are saved to
// docs/screenshots/ru-*.png.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Browser, type Page } from 'playwright-core';
import type { Transport } from '../src/delivery/transports.js';
import { createWorker, type Worker } from '../src/delivery/worker.js';
import { loadDemo } from '../src/services/demo.js';
import { cliActor } from '../src/cliAdmin.js';
import { en, ru } from './support/catalogues.js';
import { ADMIN_TOKEN, adminCall, createTestApp, keyCall, type TestApp } from './support/harness.js';
import { goTo, launchChromium, openPage, saveScreenshot, CHROMIUM_MISSING } from './support/browser.js';

const skip = CHROMIUM_MISSING;
const SITE = 'demo-courses';
const NBSP = '\u00a0';

// English words of the catalogue that must not show on a Russian page (short ones like "To" could be data).
const ENGLISH = [
  ...new Set(
    Object.keys(en)
      .filter((k) => typeof en[k] === 'string' && en[k] !== ru[k] && !k.startsWith('catalog.'))
      .map((k) => (en[k] as string).split(/\{\w+\}/)[0].trim())
      // Single lowercase words are the API's codes (endpoints, kinds) that pages show as data too.
      .filter((s) => s.length >= 6 && /[a-z]{3}/.test(s) && (/\s/.test(s) || /^[A-Z]/.test(s))),
  ),
];

describe('admin UI in Russian and English', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page;
  let worker: Worker;
  const problems: string[] = [];

  const capture: Transport = {
    kind: 'capture',
    async send(msg) {
      return { messageId: msg.messageId, response: '250 captured' };
    },
    async close() {},
  };

  const go = (path: string) => goTo(page, base + path);
  const heading = () => page.locator('main h1');
  const shot = (name: string, fullPage = true) => saveScreenshot(page, `ru-${name}`, fullPage);
  /** The page's visible text has none of the catalogue's English sentences. */
  const assertRussian = async (where: string) => {
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'ru', where);
    const text = await page.evaluate(() => {
      const clone = document.body.cloneNode(true) as HTMLElement;
      // Code, JSON and the e-mail's own content (its header names included) are data, not the UI.
      clone
        .querySelectorAll('code, pre, iframe, textarea, option, datalist, .rendered table')
        .forEach((e) => e.remove());
      return clone.innerText;
    });
    const leaked = ENGLISH.filter((s) => text.includes(s));
    assert.deepEqual(leaked, [], `${where}: English UI text on a Russian page`);
    assert.match(text, /[а-яё]{4}/i, where);
  };

  before(async () => {
    t = await createTestApp('sqlite');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    worker = createWorker({
      db: t.deps.db,
      transport: capture,
      clock: t.clock,
      publicUrl: base,
      secret: 'x'.repeat(32),
    });

    // The Russian demo project with a few real events and e-mails, and 1,500 logged events for big numbers.
    const demo = await loadDemo(t.deps, cliActor());
    const key = demo.keys.find((k) => k.name.startsWith('site backend'))!.key!;
    const paid = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'course_paid',
      email: 'anna.petrova@school.example',
      name: 'Анна Петрова',
      order_id: 'ЗК-1001',
      amount: 2500,
      currency: 'RUB',
      fields: {
        course_name: 'Финансовая грамотность в начальной школе',
        account_url: 'https://courses.example/account',
        paid_at: '2026-11-20T09:00:00+03:00',
      },
    });
    assert.equal(paid.status, 200, JSON.stringify(paid.body));
    await keyCall(t.app, key, 'POST', '/api/scoped/events/order-created', {
      email: 'ivan@school.example',
      name: 'Иван Сидоров',
      order_id: 'ЗК-1002',
      cart_type: 'course',
      course_name: 'Методика преподавания',
      fields: { pay_url: 'https://courses.example/pay/1002' },
    });
    await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
      event_type: 'olympiad_results',
      email: 'anna.petrova@school.example',
    });
    await worker.runOnce();
    const project = await t.deps.db.db
      .selectFrom('projects')
      .select('id')
      .where('site_key', '=', SITE)
      .executeTakeFirstOrThrow();
    await t.deps.db.db
      .insertInto('events')
      .values(
        Array.from({ length: 1500 }, (_, k) => ({
          project_id: project.id,
          key_id: null,
          key_last4: null,
          endpoint: 'transactional',
          event_type: 'contest_results',
          email: `bulk${k}@school.example`,
          order_id: `BULK-${k}`,
          idempotency_key: null,
          http_status: 200,
          accepted: 1,
          error_code: null,
          payload: '{}',
          effects: '{}',
          created_at: t.clock.now() - 60_000 - k,
        })),
      )
      .execute();

    browser = await launchChromium();
    // A browser set up for Russian: Accept-Language and navigator.languages say ru-RU. A missing
    // catalogue key logs a console error, which counts as a problem.
    ({ page } = await openPage(browser, problems, { locale: 'ru-RU', consoleErrors: true }));
  });

  after(async () => {
    await browser?.close();
    await worker?.stop();
    await t?.close();
  });

  it('a browser that asks for Russian gets the login page in Russian, and logs in', async () => {
    await go('/ui/');
    await page.waitForURL(/\/ui\/login/);
    await heading().filter({ hasText: 'Вход' }).waitFor();
    assert.equal(await page.title(), 'Вход · Почтовый шлюз');
    await assertRussian('login');
    await shot('login', false);
    await page.locator('summary', { hasText: 'Вход по токену' }).click();
    await page.getByLabel('Токен администратора').fill('wrong');
    await page.getByRole('button', { name: 'Войти по токену' }).click();
    await page.getByRole('alert').filter({ hasText: 'Это не токен администратора.' }).waitFor();
    await page.getByLabel('Токен администратора').fill(ADMIN_TOKEN);
    await page.getByRole('button', { name: 'Войти по токену' }).click();
    await heading().filter({ hasText: 'Сводка' }).waitFor();
  });

  it('the dashboard: Russian words, numbers and dates as Intl writes them in ru', async () => {
    await page.locator('svg.chart').first().waitFor();
    await assertRussian('dashboard');
    const events = page.locator('.card', { hasText: 'События' });
    assert.match(
      (await events.locator('dd').first().textContent())!,
      new RegExp(`^1${NBSP}50\\d$`),
      'grouped with a no-break space',
    );
    assert.match(
      (await page.locator('main p.muted').first().textContent())!,
      /^С \d{2}\.\d{2}\.\d{4} по \d{2}\.\d{2}\.\d{4}/,
    );
    assert.ok(await page.getByRole('option', { name: '14 дней' }).count());
    await shot('dashboard');
  });

  it('projects and every tab of the demo project, with its Russian categories', async () => {
    await page.getByRole('link', { name: 'Проекты', exact: true }).click();
    await heading().filter({ hasText: 'Проекты' }).waitFor();
    await assertRussian('projects');
    await page.locator('main tbody a', { hasText: SITE }).click();
    await heading().filter({ hasText: 'Педагогические курсы (демо)' }).waitFor();
    await page.locator('main p.muted', { hasText: 'шаблоны: Русский, Europe/Moscow' }).waitFor();
    for (const [tab, h2] of [
      ['keys', 'Ключи API'],
      ['routing', 'Маршрутизация'],
      ['templates', 'Шаблоны'],
      ['lists', 'Адресные книги'],
      ['categories', 'Категории курсов'],
      ['paid', 'Книги оплаченных заказов'],
      ['chain', 'Цепочка корзины'],
    ]) {
      await go(`/ui/projects/${SITE}?tab=${tab}`);
      await page.locator('.tab-body h2', { hasText: h2 }).waitFor();
      await assertRussian(`tab ${tab}`);
      if (tab === 'routing') {
        // Events no key of the project may send are folded (issue 28): this catalog event is one of them.
        await page.locator('details.routing-others > summary').click();
        await page
          .locator('td', { hasText: 'сразу после создания неоплаченного заказа на курс повышения квалификации' })
          .waitFor();
        await shot('project-routing', false);
      }
      if (tab === 'categories') {
        assert.equal(await page.locator('input[name="title"]').first().inputValue(), 'Педагог дошкольного образования');
        await shot('project-categories');
      }
      if (tab === 'keys') await shot('project-keys', false);
    }
  });

  it("sets the project's template language and time zone from its page", async () => {
    await go(`/ui/projects/${SITE}`);
    await page.locator('summary', { hasText: 'Изменить название, отправителя, язык и часовой пояс' }).click();
    await page.getByLabel('Часовой пояс').selectOption('Asia/Yekaterinburg');
    await page.getByLabel('Язык шаблонов').selectOption('en');
    await page.getByRole('button', { name: 'Сохранить', exact: true }).click();
    await page.locator('.toast', { hasText: 'Проект сохранён' }).waitFor();
    await page.locator('main p.muted', { hasText: 'шаблоны: Английский, Asia/Yekaterinburg' }).waitFor();
    const p = (await adminCall(t.app, 'GET', '/api/admin/projects')).body.items.find(
      (x: { site_key: string }) => x.site_key === SITE,
    );
    assert.deepEqual([p.locale, p.timezone], ['en', 'Asia/Yekaterinburg']);
    await adminCall(t.app, 'PATCH', `/api/admin/projects/${SITE}`, { locale: 'ru', timezone: 'Europe/Moscow' });
  });

  it('the template editor previews a Russian template with the Russian filters', async () => {
    await go(`/ui/projects/${SITE}/templates/course_payment_success`);
    await heading().filter({ hasText: 'Шаблон course_payment_success' }).waitFor();
    await page.getByLabel('Пример значений для').selectOption('course_paid');
    await page.locator('.preview-subject', { hasText: 'оплата курса' }).waitFor();
    await page.locator('.preview-text', { hasText: `Сумма: 2${NBSP}490,00${NBSP}₽.` }).waitFor();
    await page.locator('.preview-text', { hasText: 'Дата оплаты: 14 марта 2026.' }).waitFor();
    // The sample values are editable: Russian ones, and the time zone moves the payment to the next day.
    await page.locator('summary', { hasText: 'Пример значений (JSON, можно править)' }).click();
    await page.locator('textarea[name="sample"]').fill(
      JSON.stringify({
        name: 'Анна Петрова',
        order_id: 'ЗК-1001',
        amount: '12500.50',
        currency: 'RUB',
        fields: {
          course_name: 'Финансовая грамотность',
          paid_at: '2026-11-20T22:30:00Z',
          account_url: 'https://courses.example/account',
        },
      }),
    );
    await page
      .locator('.preview-subject', { hasText: 'Анна Петрова, оплата курса «Финансовая грамотность» прошла успешно' })
      .waitFor();
    await page.locator('.preview-text', { hasText: `Сумма: 12${NBSP}500,50${NBSP}₽.` }).waitFor();
    await page.locator('.preview-text', { hasText: 'Дата оплаты: 21 ноября 2026.' }).waitFor();
    await page.locator('[aria-live="polite"]', { hasText: 'Предпросмотр актуален.' }).first().waitFor();
    await assertRussian('template editor');
    await shot('template-editor');
  });

  it('events, one event, the e-mail it created, and the contact: all in Russian', async () => {
    await page.getByRole('link', { name: 'События', exact: true }).first().click();
    await heading().filter({ hasText: 'События' }).waitFor();
    await page.getByLabel('Номер заказа').fill('ЗК-1001');
    await page.getByRole('button', { name: 'Применить' }).click();
    await page.waitForURL(/order_id=/);
    const row = page.locator('main tbody tr').first();
    await row.filter({ hasText: 'принято' }).waitFor();
    assert.match((await row.locator('time').textContent())!, /^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}:\d{2}$/);
    await assertRussian('events');
    await shot('events', false);

    await row.getByRole('link').click();
    await heading()
      .filter({ hasText: /^Событие №\d+/ })
      .waitFor();
    await assertRussian('event');
    await page
      .locator('main table a', { hasText: /^#\d+$/ })
      .first()
      .click();
    await heading()
      .filter({ hasText: /^Письмо №\d+/ })
      .waitFor();
    await page.locator('main h1 .badge', { hasText: 'отправлено' }).waitFor();
    assert.equal(await page.locator('main h1 .badge').getAttribute('title'), 'sent', 'the code stays in the tooltip');
    await page.frameLocator('iframe.preview-frame').locator('a', { hasText: 'Перейти в личный кабинет' }).waitFor();
    await assertRussian('email');
    await shot('email');

    await page.getByRole('link', { name: 'Контакты', exact: true }).click();
    await page.getByLabel('Имя или адрес содержит').fill('anna.petrova');
    await page.getByRole('button', { name: 'Применить' }).click();
    await page.locator('main tbody a', { hasText: 'anna.petrova@school.example' }).click();
    await heading().filter({ hasText: 'anna.petrova@school.example' }).waitFor();
    assert.ok(
      await page.getByRole('option', { name: /^заблокирован: администратором; ничего не отправляется/ }).count(),
    );
    await assertRussian('contact');
    await shot('contact');
  });

  it('an unknown page says so in Russian', async () => {
    await go('/ui/nowhere');
    await heading().filter({ hasText: 'Страница не найдена' }).waitFor();
    await assertRussian('404');
  });

  it('the language menu switches to English, the choice outlives a reload, and switches back', async () => {
    await go('/ui/');
    await page.getByLabel('Язык', { exact: true }).selectOption('en');
    await heading().filter({ hasText: 'Dashboard' }).waitFor();
    assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
    assert.equal(await page.getByLabel('Language', { exact: true }).inputValue(), 'en');
    const focused = await page.evaluate(() => (document.activeElement as HTMLSelectElement | null)?.name);
    assert.equal(focused, 'lang', 'the focus stays on the menu');
    await page.reload();
    await heading().filter({ hasText: 'Dashboard' }).waitFor();
    const events = page.locator('.card', { hasText: 'Events' });
    assert.match((await events.locator('dd').first().textContent())!, /^1,50\d$/);
    await go('/ui/events');
    assert.match(
      (await page.locator('main tbody time').first().textContent())!,
      /^\d{2}\/\d{2}\/\d{4}, \d{1,2}:\d{2}:\d{2}\s?[AP]M$/,
    );
    await go('/ui/projects');
    await heading().filter({ hasText: 'Projects' }).waitFor();
    await page.getByLabel('Language', { exact: true }).selectOption('ru');
    await heading().filter({ hasText: 'Проекты' }).waitFor();
    await page.reload();
    await heading().filter({ hasText: 'Проекты' }).waitFor();
    await shot('projects', false);
  });

  it('an English browser gets English; no script error or missing key anywhere', async () => {
    const enContext = await browser.newContext({ locale: 'en-US' });
    const enPage = await enContext.newPage();
    await enPage.goto(`${base}/ui/login`);
    await enPage.locator('main h1', { hasText: 'Log in' }).waitFor();
    assert.equal(await enPage.evaluate(() => document.documentElement.lang), 'en');
    await enContext.close();
    assert.deepEqual(problems, []);
  });
});
