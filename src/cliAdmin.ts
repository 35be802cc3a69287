// `edu-gateway admin create-owner | reset-password`: for the first owner and for locked-out
// installations (SPEC §14). The password comes from a hidden prompt, or from stdin with --password-stdin
// (never from an argument: it would stay in the shell history and the process list).
import { userInfo } from 'node:os';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { ensureOwner } from './services/accounts.js';
import type { AuditActor } from './services/audit.js';
import type { Deps } from './services/context.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  // One trailing newline is the shell's, not the password's.
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

/** Asks on the terminal without echoing what is typed. */
function ask(question: string): Promise<string> {
  return new Promise((resolve) => {
    const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
    const rlAny = rl as unknown as { _writeToOutput: (s: string) => void };
    let asked = false;
    rlAny._writeToOutput = (s: string) => {
      if (!asked) process.stderr.write(s);
    };
    rl.question(question, (answer) => {
      rl.close();
      process.stderr.write('\n');
      resolve(answer);
    });
    asked = true;
  });
}

async function password(fromStdin: boolean): Promise<string> {
  if (fromStdin) return readStdin();
  if (!process.stdin.isTTY) throw new Error('no terminal to ask the password on: pipe it in with --password-stdin');
  const first = await ask('New password: ');
  const again = await ask('Repeat the password: ');
  if (first !== again) throw new Error('the two passwords differ; nothing changed');
  return first;
}

export const ADMIN_USAGE = `  admin create-owner --email E [--name N] [--password-stdin]
                             create an owner account (password from a prompt, or stdin)
  admin reset-password --email E [--password-stdin]
                             set a new password for an account and enable it again`;

/** Who the audit log names for a change made from the command line. */
export const cliActor = (): AuditActor => ({ actor: `cli:${userInfo().username}`, via: 'cli', address: null });

export async function adminCommand(deps: Deps, sub: string | undefined, args: string[]): Promise<number> {
  if (sub !== 'create-owner' && sub !== 'reset-password') {
    console.error(`usage:\n${ADMIN_USAGE}`);
    return 1;
  }
  const { values } = parseArgs({
    args,
    options: { email: { type: 'string' }, name: { type: 'string' }, 'password-stdin': { type: 'boolean' } },
  });
  if (!values.email) throw new Error(`admin ${sub} needs --email`);
  const who = cliActor();
  const secret = await password(values['password-stdin'] ?? false);
  const mode = sub === 'create-owner' ? 'create' : 'reset';
  const u = await ensureOwner(deps, who, { email: values.email, password: secret, name: values.name }, mode);
  console.log(
    mode === 'create'
      ? `owner ${u.email} created (account ${u.id}); log in at /ui/`
      : `password of ${u.email} changed; its sessions were ended`,
  );
  return 0;
}
