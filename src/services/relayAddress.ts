// Relay URLs may not reach the gateway's own network (SPEC §21): a project's primary or fallback relay
// that names a loopback, private, link-local or metadata address (169.254.169.254) is refused unless an
// owner allowed it for the project (allow_private_relays) or the installation allows it for every project
// (RELAYS_ALLOW_PRIVATE: tests, development, closed networks). The same rule as webhook addresses
// (services/siteWebhooks/endpoints.ts), with the same list of blocked ranges (domain/siteWebhooks.ts).
import { isIP } from 'node:net';
import type { Project } from '../db/schema.js';
import { hostOf, isPrivateAddress } from '../domain/siteWebhooks.js';
import { validationError } from '../errors.js';
import type { Deps } from './context.js';
import { systemResolver } from './siteWebhooks/send.js';

export const relaysMayBePrivate = (deps: Pick<Deps, 'config'>, project: Pick<Project, 'allow_private_relays'>) =>
  deps.config.tenants.relaysAllowPrivate || project.allow_private_relays;

/**
 * Whether a relay host is private: an IP literal is judged as it is; `localhost` always is; a name is
 * resolved and is private when any of its addresses is. A name that does not resolve is not (yet): the
 * connection check resolves it again before connecting.
 */
export async function isPrivateRelayHost(deps: Pick<Deps, 'resolveHost'>, rawUrl: string): Promise<boolean> {
  let url: URL;
  try {
    url = new URL(rawUrl.trim());
  } catch {
    return false; // not a URL: the settings' own check says so (domain/delivery.ts)
  }
  const host = hostOf(url).toLowerCase();
  if (isIP(host)) return isPrivateAddress(host);
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  let addresses: string[];
  try {
    addresses = await (deps.resolveHost ?? systemResolver)(host);
  } catch {
    return false;
  }
  return addresses.some(isPrivateAddress);
}

/** 422 naming the member (`primary.smtp_url`, `fallback.smtp_url`) whose host is private. */
export async function checkRelayAddresses(
  deps: Pick<Deps, 'config' | 'resolveHost'>,
  project: Pick<Project, 'allow_private_relays'>,
  relays: { member: string; url: string }[],
): Promise<void> {
  if (relaysMayBePrivate(deps, project)) return;
  for (const r of relays)
    if (await isPrivateRelayHost(deps, r.url))
      throw validationError(
        { reason: 'smtp_url_private', params: { field: r.member } },
        {
          invalid_fields: {
            [r.member]:
              "points at a loopback, private or link-local address (an owner may allow those for this project: the project's allow_private_relays)",
          },
        },
      );
}
