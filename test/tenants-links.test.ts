// SPEC §21 "links": an event field rendered into `<a href="{{ doc_url }}">` as `javascript:…` no longer
// reaches the e-mail: after rendering, an href/src that is not http:, https:, mailto: or tel: is dropped
// (the text stays). Saving such a template warns that the member must be a URL. Both databases.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCaptureTransport } from '../src/delivery/transports.js';
import { createWorker } from '../src/delivery/worker.js';
import { dropUnsafeLinks } from '../src/domain/safeLinks.js';
import { installationSecret } from '../src/services/secrets.js';
import { adminCall, createTestApp, DIALECTS, keyCall, setupProject, type TestApp } from './support/harness.js';
import { PUBLIC_URL } from './fixtures/delivery-support.js';

const HTML = [
  '<p><a href="{{ doc_url }}">Your document</a></p>',
  '<p><img src="{{ fields.picture | default: \'\' }}" alt="Picture"></p>',
  '<p><a href="https://school.example/works/{{ work_title }}">Work</a></p>',
  '<p><a href="mailto:help@school.example">Write</a> <a href="tel:+74950000000">Call</a></p>',
].join('\n');

describe('dropUnsafeLinks', () => {
  it('keeps http(s), mailto and tel; drops the rest however it is written', () => {
    const cases: [string, string][] = [
      ['<a href="https://x.example/a?b=1&amp;c=2">t</a>', '<a href="https://x.example/a?b=1&amp;c=2">t</a>'],
      ['<a href="javascript:alert(1)">t</a>', '<a>t</a>'],
      ['<a class="b" href=" JaVaScRiPt:alert(1)" title="x">t</a>', '<a class="b" title="x">t</a>'],
      ['<a href="java&#x09;script&#58;alert(1)">t</a>', '<a>t</a>'],
      ["<a href='data:text/html,<b>x</b>'>t</a>", '<a>t</a>'],
      ['<img src=vbscript:x alt="">', '<img alt="">'],
      ['<a href="/relative">t</a>', '<a>t</a>'],
      ['<a href="">t</a>', '<a>t</a>'],
      ['<a title="a > b" href="javascript:x">t</a>', '<a title="a > b">t</a>'],
      ['<p>href="javascript:x" as text</p>', '<p>href="javascript:x" as text</p>'],
    ];
    for (const [input, want] of cases) assert.equal(dropUnsafeLinks(input), want, input);
  });
});

for (const d of DIALECTS) {
  describe(`links in e-mails [${d.name}]`, { skip: d.skip }, () => {
    let t: TestApp;
    let key: string;
    before(async () => {
      t = await createTestApp(d.name);
      ({ key } = await setupProject(t.app, { site: 'site1' }));
    });
    after(() => t.close());

    it('saving warns that a member printed as an href must be a URL', async () => {
      const r = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: 'site1',
        name: 'contest_tpl',
        subject: 'Results',
        html: HTML,
        text: '{{ doc_url }}',
      });
      assert.ok(r.status < 300, JSON.stringify(r.body));
      assert.deepEqual(
        r.body.warnings.map((w: { code: string; member: string }) => [w.code, w.member]),
        [['href_member_not_url', 'fields.doc_url']],
      );
      assert.match(r.body.warnings[0].message, /must be an http\(s\), mailto or tel URL/);
      const plain = await adminCall(t.app, 'POST', '/api/templates', {
        site_key: 'site1',
        name: 'plain_tpl',
        subject: 'x',
        html: '<a href="https://school.example/{{ doc_url }}">x</a>',
        text: 'x',
      });
      assert.deepEqual(plain.body.warnings, []);
    });

    it('a javascript: value sent as an event field is dropped from the e-mail, its text kept', async () => {
      const r = await keyCall(t.app, key, 'POST', '/api/scoped/send/transactional', {
        event_type: 'contest_results',
        email: 'parent@example.org',
        order_id: 'L-1',
        fields: {
          event_title: 'Spring',
          work_title: 'Poem',
          place: '1',
          doc_url: 'javascript:alert(document.cookie)',
          picture: 'data:image/svg+xml,<svg onload=alert(1)>',
        },
      });
      assert.equal(r.status, 200, JSON.stringify(r.body));
      const worker = createWorker({
        db: t.deps.db,
        transport: createCaptureTransport(),
        clock: t.clock,
        publicUrl: PUBLIC_URL,
        secret: await installationSecret(t.deps),
      });
      await worker.runOnce();
      await worker.stop();
      const row = await t.deps.db.db
        .selectFrom('scheduled_emails')
        .select(['rendered', 'status'])
        .where('order_id', '=', 'L-1')
        .executeTakeFirstOrThrow();
      const html = String(JSON.parse(row.rendered ?? '{}').html);
      assert.ok(html.includes('Your document'), 'the text stays');
      assert.ok(!/javascript:/i.test(html), 'no javascript: link');
      assert.ok(!/data:image/i.test(html), 'no data: image');
      assert.match(html, /href="mailto:help@school\.example"/);
      assert.match(html, /tel:\+74950000000/);
      assert.match(html, /works\/Poem/);
    });
  });
}
