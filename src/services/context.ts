import type { Config } from '../config.js';
import type { Db } from '../db/index.js';
import type { Project } from '../db/schema.js';
import type { ApiKey } from '../repos/keys.js';

export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** What delivery offers the request path: wake the worker, and wait for an e-mail's first attempt. */
export interface DeliveryHooks {
  wake(): void;
  waitForOutcome(emailId: number, timeoutMs: number): Promise<string | undefined>;
}

export interface Deps {
  db: Db;
  config: Config;
  clock: Clock;
  delivery?: DeliveryHooks;
}

/** A gateway request after its key was checked. */
export interface GatewayCall {
  deps: Deps;
  project: Project;
  key: ApiKey;
  endpoint: string;
}
