// Which e-mails an unpaid order schedules (SPEC §3, §6): the sequence the project chose for the cart
// type replaces the default chain; otherwise the templates routed to <cart_type>_abandoned_cart_1h/1d/3d
// go out 1 h, 1 d and 3 d after the order. A pure function of what the configuration holds;
// services/configCache.ts loads that and caches the answer.
import { CART_STEPS, cartStepKey } from './catalog.js';

export interface ChainStep<T> {
  template: T;
  delayMinutes: number;
  /** Shown as the e-mail's chain_step: `1h`/`1d`/`3d`, or `step<n>` of a sequence. */
  step: string;
}

/** The configured sequence's steps, each with its template as it stands now (undefined: deleted). */
export type ConfiguredSteps<T> = { template: T | undefined; delay_minutes: number }[];

/** The routing keys whose templates make up the default chain of a cart type. */
export function defaultChainKeys(cartType: string): string[] {
  return CART_STEPS.map((s) => cartStepKey(cartType, s.step));
}

/**
 * The chain of a project's cart type. A configured sequence wins even when none of its templates is
 * usable (the project chose it; nothing is sent rather than something it replaced); a step whose
 * template is gone or belongs to another project is skipped and keeps its place in the numbering.
 * Without a sequence, default steps without a routed template are skipped.
 */
export function cartChain<T extends { project_id: number }>(
  projectId: number,
  cartType: string,
  configured: ConfiguredSteps<T> | null,
  routed: ReadonlyMap<string, T>,
): ChainStep<T>[] {
  const steps: ChainStep<T>[] = [];
  if (configured) {
    for (const [i, s] of configured.entries()) {
      if (s.template && s.template.project_id === projectId)
        steps.push({ template: s.template, delayMinutes: s.delay_minutes, step: `step${i + 1}` });
    }
    return steps;
  }
  for (const s of CART_STEPS) {
    const template = routed.get(cartStepKey(cartType, s.step));
    if (template) steps.push({ template, delayMinutes: s.delayMinutes, step: s.step });
  }
  return steps;
}
