// The bounce verdicts on 597 real bounce e-mails nobody here wrote (../shared/corpus/bounces, SPEC §19),
// through the function the SMTP listener runs for each message (reportsOfMessage), compared with
// Sisimai's verdicts kept in test/fixtures/bounces/sisimai-verdicts.jsonl (`npm run corpus:sisimai`
// regenerates them with Debian's libsisimai-perl). Then every message once more through recordReport on
// a real database, both engines: nothing crashes, every message leaves a report, and only a hard
// verdict on the e-mail's own address makes its contact invalid.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { reportsOfMessage } from '../src/reports/listener.js';
import type { InboundReport } from '../src/services/reports.js';
import { recordReport } from '../src/services/reports.js';
import { addContact, addEmail, openTestDb, seedProject, type TestDb } from './fixtures/delivery-support.js';
import { DIALECTS } from './support/harness.js';
import { REVIEWED } from './fixtures/bounces/reviewed-disagreements.js';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// BOUNCE_CORPUS: a worktree that does not sit beside ../shared names the corpus itself.
const CORPUS = process.env.BOUNCE_CORPUS ?? path.resolve(repoRoot, '../shared/corpus/bounces');
const present = existsSync(CORPUS);
const skip = present ? false : `no corpus at ${CORPUS}: the bounce corpus test is skipped`;

/**
 * Agreement under the ruling of SPEC §19 (2026-11-28): a verdict where the words decide against Sisimai
 * (test/fixtures/bounces/reviewed-disagreements.ts, `rule`) counts as agreement. Issue 39 asks 99 %; the
 * figure now is 596/602. The six differences left stand reviewed (a temporary 4.1.1, a malformed DNS
 * reply, two bare "Rejected", "not a registered gateway user" that Sisimai calls `rejected`, an
 * auto-reply).
 */
const MIN_RULED = 0.99;
/** The raw agreement measured now (561/602 = 93.2 %): a drop below it is a regression. */
const MIN_RAW = 0.931;
/** Sisimai reasons that name a policy, spam, block-list, rate or authentication refusal: never hard. */
const KEEPS_ADDRESS = new Set([
  'blocked',
  'spamdetected',
  'policyviolation',
  'securityerror',
  'virusdetected',
  'toomanyconn',
  'norelaying',
]);

interface SisimaiRow {
  file: string;
  recipient: string | null;
  reason: string | null;
  hardbounce: boolean | null;
  deliverystatus: string;
}

function sisimai(): Map<string, SisimaiRow[]> {
  const rows = readFileSync(path.join(repoRoot, 'test/fixtures/bounces/sisimai-verdicts.jsonl'), 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as SisimaiRow);
  const out = new Map<string, SisimaiRow[]>();
  for (const r of rows) out.set(r.file, [...(out.get(r.file) ?? []), r]);
  return out;
}

/** Our report about one of Sisimai's recipients: the block naming it, else the message's only one. */
function reportFor(reports: InboundReport[], recipient: string | null): InboundReport | undefined {
  const named = reports.find((r) => recipient && r.recipient === recipient.toLowerCase());
  return named ?? (reports.length === 1 || !reports.some((r) => r.recipient) ? reports[0] : undefined);
}

const verdictOf = (kind: string | undefined) =>
  kind === 'bounced'
    ? 'hard'
    : kind === 'soft_bounced' || kind === 'delayed'
      ? 'soft'
      : kind === 'complained'
        ? 'feedback'
        : kind === 'auto_reply'
          ? 'vacation'
          : (kind ?? 'none');

if (!present && process.env.CI === 'true')
  test('the bounce corpus is present in CI', () => assert.fail(`no corpus at ${CORPUS} (it sits beside the clone)`));

const files = present
  ? readdirSync(CORPUS)
      .filter((f) => f.endsWith('.eml'))
      .sort()
  : [];

describe('bounce corpus: verdicts against Sisimai (SPEC §19)', { skip }, () => {
  test(`agreement under the §19 ruling at least ${(MIN_RULED * 100).toFixed(0)} %, raw at least ${(MIN_RAW * 100).toFixed(1)} %, every difference reviewed, no policy refusal hard`, async () => {
    assert.ok(files.length >= 590, `the corpus has ${files.length} messages`);
    const reference = sisimai();
    const matrix: Record<string, number> = {};
    const disagreements: string[] = [];
    const unexplained: string[] = [];
    const ruled: string[] = [];
    const misruled: string[] = [];
    const policyHard: string[] = [];
    let total = 0;
    let agree = 0;
    let unparsed = 0;
    let messages = 0;
    let messagesAgree = 0;
    for (const f of files) {
      const reports = await reportsOfMessage(readFileSync(path.join(CORPUS, f)), [], null);
      assert.ok(reports.length >= 1, `${f} leaves a report`);
      if (reports.every((r) => r.kind === 'unparsed')) unparsed++;
      const rows = reference.get(f) ?? [];
      rows.forEach((s, i) => {
        const own = reportFor(reports, s.recipient);
        const ours = verdictOf(own?.kind);
        const theirs = s.hardbounce === true ? 'hard' : s.hardbounce === false ? 'soft' : (s.reason ?? 'none');
        matrix[`${theirs}→${ours}`] = (matrix[`${theirs}→${ours}`] ?? 0) + 1;
        if (ours === 'hard' && s.reason && KEEPS_ADDRESS.has(s.reason)) policyHard.push(`${f} ${s.recipient}`);
        if (s.hardbounce === null) return;
        total++;
        if (i === 0) messages++;
        if (ours === theirs) {
          agree++;
          if (i === 0) messagesAgree++;
          return;
        }
        const key = `${f} ${s.recipient ?? ''}`;
        disagreements.push(`${key}: Sisimai ${theirs} (${s.reason}), ours ${ours}`);
        const entry = REVIEWED.find((r) => r.files.includes(key) && r.ours === ours);
        if (!entry) return unexplained.push(key);
        if (!entry.rule) return;
        // The ruling's own conditions, checked, so that a list entry cannot stretch it.
        const holds =
          entry.rule === 'gone-address'
            ? ours === 'hard' && (s.reason === 'filtered' || s.reason === 'suspend')
            : entry.rule === 'policy-words'
              ? ours === 'soft' && theirs === 'hard'
              : s.deliverystatus !== own?.statusCode &&
                reports.some((r) => r !== own && r.statusCode === s.deliverystatus);
        (holds ? ruled : misruled).push(`${key} (${entry.rule}: Sisimai ${s.reason}, ours ${ours})`);
      });
    }
    const explained = total - unexplained.length;
    const agreeRuled = agree + ruled.length;
    // A reviewed entry that now agrees (or names a verdict we no longer give) is stale: the list must
    // say only what still differs.
    const stale = REVIEWED.flatMap((r) =>
      r.files.filter((key) => !disagreements.some((d) => d.startsWith(`${key}:`) && d.endsWith(`ours ${r.ours}`))),
    );
    const pct = (n: number, d: number) => `${((100 * n) / d).toFixed(1)} %`;
    console.log(
      [
        `bounce corpus: ${files.length} messages, ${total} recipient verdicts with a hard/soft answer from Sisimai`,
        `  agreement under the §19 ruling: ${agreeRuled}/${total} = ${pct(agreeRuled, total)}`,
        `  raw agreement on hard/soft: ${agree}/${total} = ${pct(agree, total)} (per message, first recipient: ${messagesAgree}/${messages} = ${pct(messagesAgree, messages)})`,
        `  agreement or a reviewed disagreement: ${explained}/${total} = ${pct(explained, total)}`,
        `  messages left unparsed: ${unparsed}`,
        `  Sisimai→ours: ${JSON.stringify(matrix)}`,
        `  counted as agreement by the ruling (${ruled.length}):`,
        ...ruled.map((d) => `    ${d}`),
        `  differences that stand (${total - agreeRuled}):`,
        ...disagreements
          .filter((d) => !ruled.some((r) => r.startsWith(d.slice(0, d.indexOf(':')))))
          .map((d) => `    ${d}`),
        ...(unexplained.length ? ['  disagreements not reviewed:', ...unexplained.map((d) => `    ${d}`)] : []),
      ].join('\n'),
    );
    assert.deepEqual(policyHard, [], 'a policy, spam, block-list, rate or authentication refusal judged hard');
    assert.deepEqual(misruled, [], 'entries whose rule the §19 ruling does not cover');
    assert.ok(
      agreeRuled / total >= MIN_RULED,
      `agreement under the ruling ${pct(agreeRuled, total)} fell below ${(MIN_RULED * 100).toFixed(0)} %`,
    );
    assert.ok(
      agree / total >= MIN_RAW,
      `raw agreement ${pct(agree, total)} fell below ${(MIN_RAW * 100).toFixed(1)} %`,
    );
    assert.deepEqual(unexplained, [], 'disagreements not reviewed');
    assert.ok(explained === total);
    assert.ok(unparsed <= 5, `${unparsed} messages unparsed`);
    assert.deepEqual(stale, [], 'reviewed disagreements that no longer differ: remove them from the list');
  });
});

// The same messages through recordReport, as the listener records them: each addressed (VERP) to an
// e-mail sent to Sisimai's first recipient of the message.
for (const d of DIALECTS) {
  describe(`bounce corpus recorded on ${d.name}`, { skip: skip || d.skip }, () => {
    let t: TestDb;
    before(async () => {
      t = await openTestDb(d.name);
    });
    after(async () => {
      await t.cleanup();
    });

    test('every message is stored without an error; only a hard verdict on its own address makes a contact invalid', async () => {
      const reference = sisimai();
      const seeded = await seedProject(t.db);
      // Every message on both engines: PostgreSQL refuses what SQLite takes (U+0000, odd bytes).
      const sample = files;
      let invalid = 0;
      for (const [n, f] of sample.entries()) {
        const to = reference.get(f)?.[0]?.recipient?.toLowerCase() ?? `nobody${n}@example.invalid`;
        const contactId = await addContact(t.db, seeded.projectId, `${n}.${to}`.slice(0, 300));
        const emailId = await addEmail(t.db, { ...seeded, contactId, to, status: 'sent' });
        const reports = await reportsOfMessage(readFileSync(path.join(CORPUS, f)), [emailId], null);
        for (const r of reports) await recordReport({ db: t.db, now: () => Date.now() }, r);
        const stored = await t.db.db
          .selectFrom('email_reports')
          .select('kind')
          .where('email_id', '=', emailId)
          .execute();
        assert.ok(stored.length >= 1, `${f}: no report stored on its e-mail`);
        const contact = await t.db.db
          .selectFrom('contacts')
          .select('status')
          .where('id', '=', contactId)
          .executeTakeFirstOrThrow();
        const own = reportFor(reports, to);
        if (contact.status === 'invalid') {
          invalid++;
          assert.equal(own?.kind, 'bounced', `${f}: contact invalid without a hard verdict on ${to}`);
        }
        if (own?.kind === 'bounced' && reports.filter((r) => r.recipient === to).length <= 1)
          assert.equal(contact.status, 'invalid', `${f}: hard verdict on ${to} left the contact ${contact.status}`);
      }
      console.log(`bounce corpus on ${d.name}: ${sample.length} messages recorded, ${invalid} contacts invalid`);
    });
  });
}
