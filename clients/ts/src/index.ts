// The TypeScript client of the educational messaging gateway. See README.md.
export {
  GatewayClient,
  parseRetryAfter,
  VERSION,
  type CallOptions,
  type GatewayClientOptions,
  type RetryInfo,
  type TransactionalOptions,
  type WriteOptions,
} from './client.js';
export type {
  CatalogResponse,
  DryRun,
  EmailReason,
  EmailResponse,
  EmailsQuery,
  EmailsResponse,
  EventsQuery,
  EventsResponse,
  ListContactRequest,
  ListContactResponse,
  OrderCreatedRequest,
  OrderCreatedResponse,
  PlanItem,
  PurchaseRequest,
  PurchaseResponse,
  ScopedEmail,
  ScopedEvent,
  TransactionalRequest,
  TransactionalResponse,
} from './types.js';
export {
  AuthError,
  ConnectionError,
  GatewayError,
  IdempotencyConflictError,
  RateLimitedError,
  ServerError,
  ValidationError,
  type ErrorDetails,
} from './errors.js';
export {
  WEBHOOK_EVENT_TYPES,
  WebhookVerificationError,
  WebhookVerifier,
  type WebhookEvent,
  type WebhookEventData,
  type WebhookEventType,
  type WebhookPayload,
  type WebhookVerifierOptions,
} from './webhooks.js';
export type { components, paths, webhooks } from './openapi.js';
