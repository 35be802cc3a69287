// `edu-gateway delivery …` and `edu-gateway secrets rotate` (issue 13): a project's delivery settings
// from the command line, printed with secrets masked as the admin API shows them.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { cliActor } from './cliAdmin.js';
import { validationError } from './errors.js';
import { compileRequestValidator } from './schemas/ajv.js';
import { DeliveryBody } from './schemas/delivery.js';
import type { Deps } from './services/context.js';
import * as delivery from './services/delivery.js';

export const DELIVERY_USAGE = `  delivery show --site SITE  a project's delivery settings (secrets masked)
  delivery set --site SITE (--json BODY | --file PATH|-)
                             replace them with the body of PUT /api/admin/projects/{site}/delivery
  delivery clear --site SITE back to SMTP_URL (or the capture transport)
  delivery verify --site SITE
                             connect, EHLO, STARTTLS, AUTH on each relay; look the DKIM record up
  delivery test --site SITE --template NAME --to ADDRESS
                             queue a test e-mail (a running worker sends it)
  secrets rotate             re-encrypt stored secrets under SECRET_KEY (old key: SECRET_KEY_PREVIOUS)`;

const print = (v: unknown) => console.log(JSON.stringify(v, null, 2));

/** Runs the command; its exit code, or null when it is not one of these. */
export async function deliveryCommand(
  deps: Deps,
  cmd: string,
  sub: string | undefined,
  rest: string[],
): Promise<number | null> {
  if (cmd === 'secrets') {
    if (sub !== 'rotate') return null;
    const previous = deps.config.secretKeyPrevious;
    if (!previous) throw new Error('secrets rotate needs SECRET_KEY_PREVIOUS (the key the secrets are under now)');
    const r = await delivery.rotateSecrets(deps, cliActor(), previous);
    const w = r.webhooks;
    console.log(`projects: re-encrypted ${r.rotated}, already current ${r.current}, not readable ${r.failed.length}`);
    console.log(
      `webhook endpoints: re-encrypted ${w.rotated}, already current ${w.current}, not readable ${w.failed.length}`,
    );
    if (r.failed.length) throw new Error(`projects whose secrets neither key opens: ${r.failed.join(', ')}`);
    if (w.failed.length) throw new Error(`webhook endpoints whose secrets neither key opens: ${w.failed.join(', ')}`);
    return 0;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      site: { type: 'string' },
      json: { type: 'string' },
      file: { type: 'string' },
      template: { type: 'string' },
      to: { type: 'string' },
    },
  });
  if (!values.site) throw new Error(`delivery ${sub ?? ''} needs --site`);
  const site = values.site;
  switch (sub) {
    case 'show':
      print(await delivery.getDelivery(deps, site));
      return 0;
    case 'set': {
      const text = values.json ?? (values.file ? readFileSync(values.file === '-' ? 0 : values.file, 'utf8') : null);
      if (text === null) throw new Error('delivery set needs --json or --file');
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        // Not the parser's message: it quotes the text around the error, which holds the secrets.
        throw validationError('invalid body: not JSON', {});
      }
      // The validator of PUT /api/admin/projects/{site}/delivery: the same schema and input rules (SPEC §10).
      const checkDeliveryBody = compileRequestValidator(DeliveryBody, 'body');
      if (!checkDeliveryBody(body)) {
        const first = checkDeliveryBody.errors?.[0];
        throw validationError(`invalid body: ${first?.instancePath || '/'} ${first?.message ?? ''}`, {});
      }
      print(await delivery.putDelivery(deps, cliActor(), site, body as DeliveryBody));
      return 0;
    }
    case 'clear':
      print(await delivery.deleteDelivery(deps, cliActor(), site));
      return 0;
    case 'verify': {
      const r = await delivery.verifyDelivery(deps, cliActor(), site);
      print(r);
      return r.ok ? 0 : 2;
    }
    case 'test':
      if (!values.template || !values.to) throw new Error('delivery test needs --template and --to');
      print(await delivery.testSend(deps, cliActor(), site, { template: values.template, to: values.to }));
      return 0;
    default:
      return null;
  }
}
